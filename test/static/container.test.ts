import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv, type AnySchemaObject } from 'ajv';
import {
  Add,
  Arg,
  Cmd,
  Copy,
  DockerfileParser,
  Entrypoint,
  Env,
  Healthcheck,
  User,
  type Instruction,
} from 'dockerfile-ast';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { ZodType } from 'zod';
import { EnvSchema } from '../../config/env-schema.js';

/**
 * Static checks of the container files: no Docker engine runs here, so the compose file is
 * validated against the Compose Specification schema (compose-spec.json, see README.md beside
 * this file) and the Dockerfile is linted and read as an AST. Only the image's healthcheck
 * command is run for real, against local servers on port 0.
 */

/**
 * A port nothing listens on: the suite's dead port (no test binds it; listeners take ports the
 * kernel picks). A port freed a moment before may already be another test file's listener.
 */
const REFUSING_PORT = 9;
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

// --- docker-compose.yml ----------------------------------------------------------------------

interface ComposeService {
  build?: string | { context?: string };
  image?: string;
  command?: string | string[];
  env_file?: string | (string | { path: string; required?: boolean })[];
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: (string | number | { target: number | string })[];
  depends_on?: string[] | Record<string, { condition: string }>;
  restart?: string;
  healthcheck?: { test?: string | string[]; disable?: boolean };
  stop_grace_period?: string;
  read_only?: boolean;
  cap_drop?: string[];
  security_opt?: string[];
  volumes?: string[];
}

const composeText = read('docker-compose.yml');
// Schema-checked in the first test; the interface covers only the fields asserted below.
const compose = parseYaml(composeText) as {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
};
const gateway = compose.services.gateway!;
const redis = compose.services.redis!;
const redisCache = compose.services['redis-cache']!;
const simulators = compose.services.simulators!;

/** A compose value as the gateway sees it with no .env: `${NAME:-default}` is its default. */
const interpolated = (value: string | undefined) => value?.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');

function compileComposeSchema() {
  const schema = JSON.parse(read('test/static/compose-spec.json')) as AnySchemaObject;
  // strictTypes off: the spec relies on unions (["string", "number"]) and on keywords that apply
  // only when the value is an object; unknown keywords still fail the compile (strictSchema).
  const ajv = new Ajv({ allErrors: true, strictTypes: false });
  // The spec names its meta-schema by the https spelling of draft-07's id; ajv knows the http one.
  const draft07 = ajv.getSchema('http://json-schema.org/draft-07/schema')!.schema as object;
  ajv.addMetaSchema({ ...draft07, $id: 'https://json-schema.org/draft-07/schema' });
  return ajv.compile(schema);
}
const validateCompose = compileComposeSchema();

/** A service's `environment` as name → value, whichever of the two forms the file uses. */
function environmentOf(service: ComposeService): Map<string, string | undefined> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return new Map(
      env.map((entry) => {
        const at = entry.indexOf('=');
        return at === -1 ? [entry, undefined] : [entry.slice(0, at), entry.slice(at + 1)];
      }),
    );
  }
  return new Map(
    Object.entries(env).map(([name, value]) => [name, interpolated(value?.toString())]),
  );
}

/** A compose duration (`1m30s`, `20s`) in seconds. */
function durationSeconds(value: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, ns: 1e-9 };
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|ns)/g)];
  expect(parts.map((part) => part[0]).join('')).toBe(value);
  return parts.reduce((sum, [, amount, unit]) => sum + Number(amount) * units[unit!]!, 0);
}

/** The default of an env-schema variable, as the gateway would read it with the variable unset. */
const envDefault = (name: 'PORT' | 'SHUTDOWN_TIMEOUT_MS') => EnvSchema.shape[name].parse(undefined);

describe('docker-compose.yml', () => {
  it('when it is validated against the Compose Specification schema, then it has no errors', () => {
    expect(validateCompose(compose), JSON.stringify(validateCompose.errors)).toBe(true);
    expect(compose).not.toHaveProperty('version');
  });

  it('when a service misspells a depends_on condition, then the schema rejects it', () => {
    const broken = {
      services: { a: { image: 'x', depends_on: { b: { condition: 'service_heathy' } } } },
    };
    expect(validateCompose(broken)).toBe(false);
  });

  it('when the state redis is defined, then it is a tag-pinned image with a ping healthcheck, noeviction, an append-only file on a volume and no published port', () => {
    expect(redis.image).toMatch(/^redis:7(\.\d+)*-alpine$/);
    expect([redis.healthcheck?.test].flat().join(' ')).toMatch(/\bredis-cli\b.*\bping\b/);
    const command = [redis.command].flat();
    expect(command[command.indexOf('--maxmemory-policy') + 1]).toBe('noeviction');
    expect(command[command.indexOf('--appendonly') + 1]).toBe('yes');
    expect(redis.volumes).toEqual(['redis-state:/data']);
    expect(compose.volumes).toHaveProperty('redis-state');
    expect(redis.ports).toBeUndefined();
  });

  it('when the cache redis is defined, then it evicts least recently used keys under a maxmemory, keeps nothing on disk and publishes no port', () => {
    expect(redisCache.image).toBe(redis.image);
    expect([redisCache.healthcheck?.test].flat().join(' ')).toMatch(/\bredis-cli\b.*\bping\b/);
    const command = [redisCache.command].flat();
    expect(command[command.indexOf('--maxmemory-policy') + 1]).toBe('allkeys-lru');
    expect(command[command.indexOf('--maxmemory') + 1]).toMatch(/^\d+[kmg]b$/);
    expect(command.join(' ')).toMatch(/--appendonly no\b/);
    expect(command[command.indexOf('--save') + 1]).toBe('');
    expect(redisCache.ports).toBeUndefined();
  });

  it('when the gateway starts, then it is built here, reads .env if there is one, waits for a healthy redis and restarts', () => {
    expect(gateway.build === '.' || (gateway.build as { context?: string }).context === '.').toBe(
      true,
    );
    // A fresh checkout has no .env: the stack must start without one.
    expect([gateway.env_file].flat()).toEqual([{ path: '.env', required: false }]);
    expect(gateway.depends_on).toEqual({
      redis: { condition: 'service_healthy' },
      'redis-cache': { condition: 'service_healthy' },
    });
    expect(gateway.restart).toMatch(/^(always|unless-stopped|on-failure(:\d+)?)$/);
  });

  it('when the gateway gets REDIS_URL and REDIS_CACHE_URL, then they point at the state and cache services', () => {
    const url = environmentOf(gateway).get('REDIS_URL');
    expect(url).toBe('redis://redis:6379/0');
    expect(Object.keys(compose.services)).toContain(new URL(url!).hostname);
    const cacheUrl = environmentOf(gateway).get('REDIS_CACHE_URL');
    expect(cacheUrl).toBe('redis://redis-cache:6379/0');
    expect(Object.keys(compose.services)).toContain(new URL(cacheUrl!).hostname);
  });

  it('when the compose file sets gateway variables, then each is an env-schema variable with a valid value', () => {
    const fields: Record<string, ZodType> = EnvSchema.shape;
    const environment = [...environmentOf(gateway)];
    expect(environment.length).toBeGreaterThan(0);
    for (const [name, value] of environment) {
      expect(Object.keys(fields), name).toContain(name);
      expect(fields[name]!.safeParse(value).success, `${name}=${value}`).toBe(true);
    }
  });

  it("when the gateway is health-checked, then it inherits the image's probe and publishes the exposed port", () => {
    expect(gateway.healthcheck?.test).toBeUndefined();
    expect(gateway.healthcheck?.disable).not.toBe(true);
    const targets = (gateway.ports ?? []).map((port) =>
      typeof port === 'object' ? String(port.target) : String(port).split(':').at(-1),
    );
    // The public port, and the operations port where the probe and Prometheus ask.
    expect(targets).toEqual([String(envDefault('PORT')), environmentOf(gateway).get('OPS_PORT')]);
    expect(environmentOf(gateway).get('PORT') ?? String(envDefault('PORT'))).toBe(targets[0]);
  });

  it('when the gateway is stopped, then its grace period outlasts the default drain timeout with a margin', () => {
    const drainSeconds = envDefault('SHUTDOWN_TIMEOUT_MS') / 1000;
    expect(durationSeconds(gateway.stop_grace_period ?? '10s')).toBeGreaterThanOrEqual(
      drainSeconds + 5,
    );
  });

  it('when no .env exists, then the gateway environment alone is a valid configuration pointing at the simulators service', async () => {
    const { loadConfig } = await import('../../config/load-config.js');
    const config = loadConfig(Object.fromEntries(environmentOf(gateway)));
    expect(new URL(config.search.baseUrl).hostname).toBe('simulators');
    expect(new URL(config.chat.baseUrl).hostname).toBe('simulators');
    expect(config.opsPort).toBeDefined();
  });

  it('when the simulators run, then they are the same image with their own entry point, on the ports and token the gateway uses', async () => {
    expect(simulators.image).toBe(gateway.image);
    expect(simulators.image).toBeDefined();
    expect(simulators.command).toEqual(['node', 'dist/simulators/main.js']);
    const sim = environmentOf(simulators);
    const gw = environmentOf(gateway);
    expect(sim.get('SIM_HOST')).toBe('0.0.0.0');
    expect(gw.get('SEARCH_BASE_URL')).toBe(`http://simulators:${sim.get('SIM_SEARCH_PORT')}`);
    expect(gw.get('CHAT_BASE_URL')).toBe(`http://simulators:${sim.get('SIM_CHAT_PORT')}`);
    expect(sim.get('SIM_SEARCH_CLIENT_TOKEN')).toBe(gw.get('SEARCH_CLIENT_TOKEN'));
    // The service account is the chat simulator's administrator, whose seed is the same everywhere.
    const { createChatSimulator } = await import('../../simulators/chat/chat-simulator.js');
    const admin = createChatSimulator().credentials('administrator');
    expect([gw.get('CHAT_EMAIL'), gw.get('CHAT_API_KEY')]).toEqual([admin.email, admin.apiKey]);
    expect(simulators.read_only).toBe(true);
  });

  it('when .env.example is copied to .env, then compose and the example agree on every upstream value', () => {
    const example = new Map(
      [...read('.env.example').matchAll(/^([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]),
    );
    const gw = environmentOf(gateway);
    for (const name of [
      'SEARCH_BASE_URL',
      'SEARCH_CLIENT_TOKEN',
      'CHAT_BASE_URL',
      'CHAT_AUTH_MODE',
      'CHAT_EMAIL',
      'CHAT_API_KEY',
    ]) {
      expect(example.get(name), name).toBe(gw.get(name));
    }
  });

  it('when the gateway runs, then its root filesystem is read-only and it holds no capabilities', () => {
    expect(gateway.read_only).toBe(true);
    expect(gateway.cap_drop).toEqual(['ALL']);
    expect(gateway.security_opt).toContain('no-new-privileges:true');
  });
});

// --- Dockerfile ------------------------------------------------------------------------------

const dockerfileText = read('Dockerfile');
const dockerfile = DockerfileParser.parse(dockerfileText);

/** Instructions grouped by build stage; instructions before the first FROM are left out. */
const stages = dockerfile.getInstructions().reduce<Instruction[][]>((all, instruction) => {
  if (instruction.getKeyword() === 'FROM') all.push([]);
  all.at(-1)?.push(instruction);
  return all;
}, []);
const finalStage = stages.at(-1) ?? [];
const ofKeyword = (stage: Instruction[], keyword: string) =>
  stage.filter((instruction) => instruction.getKeyword() === keyword);
/** A COPY's `--from` (dockerfile-ast's getFromFlag() is null when COPY has other flags too). */
const fromFlagOf = (copy: Copy) =>
  copy
    .getFlags()
    .find((flag) => flag.getName() === 'from')
    ?.getValue();
const indexWhere = (stage: Instruction[], keyword: string, pattern: RegExp) =>
  stage.findIndex(
    (instruction) =>
      instruction.getKeyword() === keyword && pattern.test(instruction.getArgumentsContent() ?? ''),
  );

/** The argv of the final stage's HEALTHCHECK, which must be in exec form. */
function healthcheckCommand(): string[] {
  const [healthcheck] = finalStage.filter((instruction) => instruction instanceof Healthcheck);
  const exec = /\bCMD\s+(\[[\s\S]*\])\s*$/.exec(healthcheck?.getArgumentsContent() ?? '');
  expect(exec, 'HEALTHCHECK CMD in exec form').not.toBeNull();
  return JSON.parse(exec![1]!) as string[];
}

/**
 * Runs the image's healthcheck script with PORT (and whatever else) set; resolves to its exit
 * code. The script is the compiled src file, so its source runs here (through tsx).
 */
async function runHealthcheck(
  port: number,
  env: Record<string, string> = {},
): Promise<number | null> {
  const [command, script] = healthcheckCommand();
  expect(command).toBe('node');
  const source = script!.replace(/^dist\/(.*)\.js$/, '$1.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', source], {
    env: { PATH: process.env.PATH, PORT: String(port), ...env },
    stdio: 'ignore',
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

async function withServer<T>(handler: RequestListener, run: (port: number) => Promise<T>) {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await run((server.address() as AddressInfo).port);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('Dockerfile', () => {
  it('when dockerfile-utils lints it, then it reports no error or warning', () => {
    // LSP severities: 1 error, 2 warning; none given means the client decides, so count it.
    const problems = lintDockerfile(dockerfileText).filter((d) => (d.severity ?? 1) <= 2);
    expect(problems).toEqual([]);
  });

  it('when a Dockerfile has a bad HEALTHCHECK duration, then dockerfile-utils reports it', () => {
    const broken = 'FROM node:22-bookworm-slim\nHEALTHCHECK --interval=10x CMD true\n';
    expect(lintDockerfile(broken).length).toBeGreaterThan(0);
  });

  it('when its stages are read, then there are at least two, all on one Node 22 base pinned by tag', () => {
    const froms = dockerfile.getFROMs();
    expect(froms.length).toBeGreaterThanOrEqual(2);
    expect(stages).toHaveLength(froms.length);
    for (const from of froms) {
      expect(from.getImageName()).toBe('node');
      expect(from.getImageTag()).toMatch(/^22(\.\d+)*-bookworm-slim$/);
    }
    expect(new Set(froms.map((from) => from.getImage())).size).toBe(1);
  });

  it('when the final stage runs, then it is as a non-root user', () => {
    const user = finalStage.filter((instruction) => instruction instanceof User).at(-1);
    const name = user?.getArgumentsContent()?.split(':')[0];
    expect(name).toBeDefined();
    expect(['root', '0']).not.toContain(name);
  });

  it('when the final stage installs dependencies, then it copies the manifests first and omits dev ones', () => {
    const manifests = indexWhere(finalStage, 'COPY', /\bpackage\.json\b.*\bpackage-lock\.json\b/);
    const install = indexWhere(finalStage, 'RUN', /\bnpm ci\b[^&|;]*--omit=dev\b/);
    const code = finalStage.findIndex((i) => i instanceof Copy && fromFlagOf(i) !== undefined);
    expect(manifests).toBeGreaterThanOrEqual(0);
    expect(install).toBeGreaterThan(manifests);
    expect(code).toBeGreaterThan(install);
    const env = finalStage.flatMap((i) => (i instanceof Env ? i.getProperties() : []));
    expect(env.map((p) => [p.getName(), p.getValue()])).toContainEqual(['NODE_ENV', 'production']);
  });

  it('when the final stage takes the build output, then dist comes from the build stage and stays root-owned', () => {
    const buildStage = dockerfile.getFROMs()[0]!.getBuildStage();
    const copies = finalStage.filter((instruction) => instruction instanceof Copy);
    const fromBuild = copies.filter((copy) => fromFlagOf(copy) === buildStage);
    expect(fromBuild.map((copy) => copy.getArgumentsContent())).toEqual(['/app/dist ./dist']);
    expect(
      indexWhere(stages[0]!, 'RUN', /^npm run build -- --sourceMap false$/),
    ).toBeGreaterThanOrEqual(0);
    for (const copy of copies) {
      expect(copy.getFlags().map((flag) => flag.getName())).not.toContain('chown');
    }
  });

  it('when the container starts, then CMD is the exec form of npm start, its environment in ENV', async () => {
    const { GATEWAY_ENVIRONMENT, gatewayEnvironmentAssignments } =
      await import('../../config/runtime.js');
    const cmds = finalStage.filter((instruction) => instruction instanceof Cmd);
    expect(cmds).toHaveLength(1);
    expect(cmds[0]!.getOpeningBracket()).not.toBeNull();
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts
      .start;
    const assignments = `${gatewayEnvironmentAssignments()} `;
    expect(start.startsWith(assignments)).toBe(true);
    expect(cmds[0]!.getJSONStrings().map((arg) => arg.getJSONValue())).toEqual(
      start.slice(assignments.length).split(' '),
    );
    const env = finalStage.flatMap((i) => (i instanceof Env ? i.getProperties() : []));
    for (const [name, value] of Object.entries(GATEWAY_ENVIRONMENT)) {
      expect(env.map((p) => [p.getName(), p.getValue()])).toContainEqual([name, value]);
    }
    expect(finalStage.filter((instruction) => instruction instanceof Entrypoint)).toEqual([]);
  });

  it('when the gateway process starts, then it has the heap cap and environment the benchmark measured (config/runtime.ts)', async () => {
    const { GATEWAY_NODE_OPTIONS, gatewayEnvironmentAssignments } =
      await import('../../config/runtime.js');
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts
      .start;
    expect(start).toBe(
      `${gatewayEnvironmentAssignments()} node ${GATEWAY_NODE_OPTIONS} dist/src/main.js`,
    );
  });

  it("when the port is exposed, then it is the gateway's default PORT", () => {
    const exposed = ofKeyword(finalStage, 'EXPOSE').map((i) => i.getArgumentsContent());
    expect(exposed).toEqual([String(envDefault('PORT'))]);
  });

  it('when the image is health-checked, then node runs the compiled probe, with no curl or wget', () => {
    expect(finalStage.filter((instruction) => instruction instanceof Healthcheck)).toHaveLength(1);
    expect(healthcheckCommand()).toEqual(['node', 'dist/src/healthcheck.js']);
  });

  it('when the image runs an entry point, then its source is part of the build (tsconfig.build.json)', () => {
    const build = JSON.parse(read('tsconfig.build.json')) as { include: string[] };
    const entries = [
      healthcheckCommand()[1]!,
      'dist/src/main.js',
      [simulators.command].flat().at(-1)!,
    ];
    for (const entry of entries) {
      const source = entry.replace(/^dist\/(.*)\.js$/, '$1.ts');
      expect(existsSync(new URL(`../../${source}`, import.meta.url)), source).toBe(true);
      expect(build.include, source).toContain(source.split('/')[0]);
    }
  });

  it('when the final stage is read, then it ships no tests, benchmarks or sources but the demo page', () => {
    const copied = finalStage
      .filter((instruction) => instruction instanceof Copy)
      .map((copy) => copy.getArgumentsContent() ?? '');
    expect(copied).toEqual([
      'package.json package-lock.json ./',
      '/app/dist ./dist',
      'simulators/demo-page ./simulators/demo-page',
    ]);
  });

  it('when the demo page imports a module the gateway serves from node_modules, then its package is a production dependency, which the final stage installs', () => {
    // The page's `./vendor/<package>.mjs` imports (src/http/client-module.ts serves them).
    const page = new URL('../../simulators/demo-page/', import.meta.url);
    const vendored = readdirSync(page)
      .filter((file) => file.endsWith('.js'))
      .flatMap((file) => [
        ...readFileSync(new URL(file, page), 'utf8').matchAll(
          /^import\s[^;]*?from\s+'\.\/vendor\/([^']+)\.mjs';/gm,
        ),
      ])
      .map((match) => match[1]!);
    expect(vendored).toEqual(['openapi-fetch']);
    const manifest = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    const lock = JSON.parse(read('package-lock.json')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    for (const name of vendored) {
      expect(Object.keys(manifest.dependencies), name).toContain(name);
      // `npm ci --omit=dev` leaves out exactly the lock's `dev` packages.
      expect(lock.packages[`node_modules/${name}`], name).toBeDefined();
      expect(lock.packages[`node_modules/${name}`]?.dev, name).toBeUndefined();
    }
  });

  it("when the healthcheck command runs, then it exits 0 only on /healthz's 200 and 1 on failure, timeout or refusal", async () => {
    const healthy: RequestListener = (req, res) =>
      res.writeHead(req.url === '/healthz' ? 200 : 404).end();
    // The four probes at once: each starts a Node process, and one after another they took
    // most of the test's 20 s on a machine under stress-ng.
    const [ok, failing, hanging, refused] = await Promise.all([
      withServer(healthy, runHealthcheck),
      withServer((_req, res) => res.writeHead(503).end(), runHealthcheck),
      withServer(() => undefined, runHealthcheck),
      runHealthcheck(REFUSING_PORT),
    ]);
    expect(ok).toBe(0);
    expect(failing).toBe(1);
    expect(hanging).toBe(1);
    expect(refused).toBe(1);
  });

  it('when OPS_PORT is set, then the probe asks the operations port, not PORT', async () => {
    const healthy: RequestListener = (req, res) =>
      res.writeHead(req.url === '/healthz' ? 200 : 404).end();
    const [onOps, onPortOnly] = await Promise.all([
      withServer(healthy, (ops) => runHealthcheck(REFUSING_PORT, { OPS_PORT: String(ops) })),
      withServer(healthy, (port) => runHealthcheck(port, { OPS_PORT: String(REFUSING_PORT) })),
    ]);
    expect(onOps).toBe(0);
    expect(onPortOnly).toBe(1);
  });

  it('when any stage is read, then no ADD fetches a remote URL', () => {
    const remote = dockerfile
      .getInstructions()
      .filter((instruction) => instruction instanceof Add)
      .flatMap((add) => add.getArguments().map((arg) => arg.getValue()))
      .filter((source) => /^([a-z][a-z0-9+.-]*:\/\/|git@)/i.test(source));
    expect(remote).toEqual([]);
  });

  it('when ENV and ARG names are read, then none names a secret', () => {
    const names = dockerfile.getInstructions().flatMap((instruction) => {
      if (instruction instanceof Env) return instruction.getProperties().map((p) => p.getName());
      if (instruction instanceof Arg) return [instruction.getProperty()?.getName() ?? ''];
      return [];
    });
    expect(names.filter((name) => /TOKEN|KEY|SECRET|PASSWORD/i.test(name))).toEqual([]);
  });
});

describe('.dockerignore', () => {
  it('when the build context is sent, then dependencies, build output, git data and .env stay out', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    for (const entry of ['node_modules', 'dist', '.git', 'coverage', '.env', 'test']) {
      expect(ignored).toContain(entry);
    }
    expect(ignored.filter((line) => line.startsWith('!'))).toEqual([]);
  });
});
