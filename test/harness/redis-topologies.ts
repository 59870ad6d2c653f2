import { execFile, spawn, type ChildProcess } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually } from '../helpers/eventually.js';
import {
  exitOf,
  freePort,
  onFreshPorts,
  tail,
  waitForChild,
  type ExitStatus,
} from './chaos-processes.js';

/*
 * Real Redis topologies from Debian's redis-server and redis-cli, on loopback and free ports:
 * a Cluster of three masters with one replica each, and a Sentinel setup (master, replica,
 * sentinel). Each node can be SIGKILLed to force a failover.
 */

const run = promisify(execFile);

export interface RedisNode {
  readonly port: number;
  readonly running: boolean;
  kill(): Promise<void>;
  /**
   * Stops the process with SIGSTOP: its sockets stay open and it answers nothing, the way a
   * stalled replica looks to everything connected to it. `resume` sends SIGCONT.
   */
  pause(): void;
  resume(): void;
}

interface StartedNode extends RedisNode {
  /** What it logs (Redis writes its log to stdout when no logfile is set). */
  readonly log: EventEmitter;
  stop(): Promise<void>;
}

function startNode(args: string[], ready: RegExp): Promise<StartedNode> {
  return (async () => {
    const child: ChildProcess = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = tail(child);
    let exited = false;
    const exit: Promise<ExitStatus> = exitOf(child).then((status) => {
      exited = true;
      return status;
    });
    await waitForChild(child, 'redis-server', { line: ready }, 10_000, output);
    const port = Number(args[args.indexOf('--port') + 1]);
    let paused = false;
    const kill = async () => {
      if (exited) return;
      child.kill('SIGKILL');
      await exit;
    };
    return {
      port,
      get running() {
        return !exited;
      },
      log: child.stdout!,
      kill,
      // A stopped process still dies of SIGKILL, so stop() needs no SIGCONT first.
      stop: kill,
      pause() {
        if (exited || paused) return;
        paused = true;
        child.kill('SIGSTOP');
      },
      resume() {
        if (exited || !paused) return;
        paused = false;
        child.kill('SIGCONT');
      },
    };
  })();
}

/**
 * `n` different free ports. Each probe releases its port at once, so two probes in a row can
 * return the same one.
 */
async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/** `redis-cli -p port args…`, its output. */
export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]);
  return stdout;
}

/** A check made with redis-cli: a reply that fails means "not yet". */
const cliCheck = (check: () => Promise<boolean>) => () => check().catch(() => false);

/** Each check starts redis-cli processes: one round every 100 ms at most, not a busy loop. */
const REDIS_CLI_INTERVAL_MS = 100;

export interface RedisCluster {
  /** `host:port,…` of every node: what REDIS_CLUSTER_NODES gets. */
  readonly seeds: string;
  readonly nodes: readonly RedisNode[];
  /** The node that is master of the slot `key` (a full key, prefix included) hashes to now. */
  masterOf(key: string): Promise<RedisNode>;
  /** Resolves when every live node says the cluster is ok and `port`'s slots have a new master. */
  failedOver(killed: RedisNode): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Six redis-server processes made one cluster by `redis-cli --cluster create`; on fresh ports
 * again when one probed free was taken before its node bound it.
 */
export function startRedisCluster(): Promise<RedisCluster> {
  return onFreshPorts(startRedisClusterOnce);
}

async function startRedisClusterOnce(): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'bff-cluster-'));
  // Each node's cluster bus on a free port of its own: the default, its port + 10000, was
  // never checked, and under load another process held one once (bind: address in use).
  const allPorts = await freePorts(12);
  const ports = allPorts.slice(0, 6);
  const settled = await Promise.allSettled(
    ports.map((port, i) =>
      startNode(
        [
          '--port',
          String(port),
          '--cluster-port',
          String(allPorts[6 + i]),
          '--bind',
          '127.0.0.1',
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          // Seconds, not the default 15: a killed master is replaced within a few seconds.
          '--cluster-node-timeout',
          '1000',
          // A replica may take over however long its master has been gone.
          '--cluster-replica-validity-factor',
          '0',
          // Replicas sync at once, not after the default 5 s batching delay.
          '--repl-diskless-sync-delay',
          '0',
        ],
        /Ready to accept connections/,
      ),
    ),
  );
  const nodes = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.all(nodes.map((node) => node.stop()));
    rmSync(dir, { recursive: true, force: true });
    throw failed.reason;
  }
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      '1',
      '--cluster-yes',
    ]);
    await eventually(
      cliCheck(async () =>
        (await Promise.all(ports.map((port) => redisCli(port, 'cluster', 'info')))).every((info) =>
          info.includes('cluster_state:ok'),
        ),
      ),
      {
        what: 'the cluster to be ok on every node',
        timeoutMs: 20_000,
        intervalMs: REDIS_CLI_INTERVAL_MS,
      },
    );
    // A replica that has not finished its first sync cannot take over its master.
    await eventually(
      cliCheck(async () => {
        const infos = await Promise.all(ports.map((port) => redisCli(port, 'info', 'replication')));
        const replicas = infos.filter((info) => info.includes('role:slave'));
        return replicas.length === 3 && replicas.every((i) => i.includes('master_link_status:up'));
      }),
      {
        what: 'every replica to be in sync',
        timeoutMs: 20_000,
        intervalMs: REDIS_CLI_INTERVAL_MS,
      },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const byPort = new Map(nodes.map((node) => [node.port, node]));
  const live = () => nodes.filter((node) => node.running);

  async function masterPortOf(key: string): Promise<number> {
    const probe = live()[0]!;
    const slot = Number((await redisCli(probe.port, 'cluster', 'keyslot', key)).trim());
    const lines = (await redisCli(probe.port, 'cluster', 'nodes')).trim().split('\n');
    for (const line of lines) {
      const fields = line.split(' ');
      if (!fields[2]?.includes('master') || fields[2].includes('fail')) continue;
      const port = Number(/:(\d+)@/.exec(fields[1] ?? '')?.[1]);
      for (const range of fields.slice(8)) {
        const [from, to] = range.split('-').map(Number);
        if (slot >= from! && slot <= (to ?? from)!) return port;
      }
    }
    throw new Error(`no master serves slot ${slot}`);
  }

  return {
    seeds: ports.map((port) => `127.0.0.1:${port}`).join(','),
    nodes,
    async masterOf(key) {
      return byPort.get(await masterPortOf(key))!;
    },
    async failedOver(killed) {
      await eventually(
        cliCheck(async () => {
          const infos = await Promise.all(live().map((n) => redisCli(n.port, 'cluster', 'info')));
          if (!infos.every((info) => info.includes('cluster_state:ok'))) return false;
          const nodesText = await redisCli(live()[0]!.port, 'cluster', 'nodes');
          const masters = nodesText
            .split('\n')
            .filter((l) => l.includes('master') && !l.includes('fail'));
          return masters.length === 3 && !masters.some((l) => l.includes(`:${killed.port}@`));
        }),
        {
          what: 'a replica to take over the killed master',
          timeoutMs: 30_000,
          intervalMs: REDIS_CLI_INTERVAL_MS,
        },
      );
    },
    stop,
  };
}

export interface RedisSentinelSetup {
  /** `host:port` of the Sentinel: what REDIS_SENTINELS gets. */
  readonly sentinels: string;
  readonly masterName: string;
  /** The node that is master now, as the Sentinel says. */
  master(): Promise<RedisNode>;
  /** The other data node: the replica, until a failover promotes it. */
  replica(): Promise<RedisNode>;
  /** `redis-cli` against a data node or the Sentinel (with the password, if any). */
  cli(port: number, ...args: string[]): Promise<string>;
  /** Resolves when the Sentinel names another master than `killed`, and it answers. */
  failedOver(killed: RedisNode): Promise<void>;
  stop(): Promise<void>;
}

/** A master, a replica and one Sentinel (quorum 1) that fails over within seconds. */
/**
 * With `password`, the master and replica require it (`requirepass`, `masterauth`) and the
 * Sentinel uses it to watch them (`auth-pass`); the Sentinel itself stays open, as is common.
 */
export function startRedisSentinel(
  options: { password?: string } = {},
): Promise<RedisSentinelSetup> {
  return onFreshPorts(() => startRedisSentinelOnce(options));
}

async function startRedisSentinelOnce(options: { password?: string }): Promise<RedisSentinelSetup> {
  const auth =
    options.password === undefined
      ? []
      : ['--requirepass', options.password, '--masterauth', options.password];
  const cli = (port: number, ...args: string[]) =>
    port === sentinelPort || options.password === undefined
      ? redisCli(port, ...args)
      : redisCli(port, '--no-auth-warning', '-a', options.password, ...args);
  const dir = mkdtempSync(join(tmpdir(), 'bff-sentinel-'));
  const masterName = 'bffmaster';
  const [masterPort, replicaPort, sentinelPort] = (await freePorts(3)) as [number, number, number];
  const common = [
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--repl-diskless-sync-delay',
    '0',
    ...auth,
  ];
  const started: { stop(): Promise<void> }[] = [];
  const begin = async (args: string[], ready: RegExp) => {
    try {
      const node = await startNode(args, ready);
      started.push(node);
      return node;
    } catch (error) {
      await Promise.all(started.map((node) => node.stop()));
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  };
  const master = await begin(
    ['--port', String(masterPort), ...common],
    /Ready to accept connections/,
  );
  const replica = await begin(
    ['--port', String(replicaPort), ...common, '--replicaof', '127.0.0.1', String(masterPort)],
    /Ready to accept connections/,
  );
  const config = join(dir, 'sentinel.conf');
  writeFileSync(
    config,
    [
      `port ${sentinelPort}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} 1`,
      `sentinel down-after-milliseconds ${masterName} 1000`,
      `sentinel failover-timeout ${masterName} 3000`,
      `sentinel parallel-syncs ${masterName} 1`,
      ...(options.password === undefined
        ? []
        : [`sentinel auth-pass ${masterName} ${options.password}`]),
      '',
    ].join('\n'),
  );
  const sentinel = await begin(
    [config, '--sentinel', '--port', String(sentinelPort)],
    /\+monitor master/,
  );
  const nodes = [master, replica];
  const stop = async () => {
    await Promise.all([sentinel, ...nodes].map((node) => node.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await eventually(
      cliCheck(async () =>
        (await cli(replicaPort, 'info', 'replication')).includes('master_link_status:up'),
      ),
      {
        what: 'the replica to be in sync',
        timeoutMs: 10_000,
        intervalMs: REDIS_CLI_INTERVAL_MS,
      },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const masterPortNow = async () => {
    const reply = await redisCli(sentinelPort, 'sentinel', 'get-master-addr-by-name', masterName);
    return Number(reply.trim().split('\n')[1]);
  };
  return {
    sentinels: `127.0.0.1:${sentinelPort}`,
    masterName,
    async master() {
      const port = await masterPortNow();
      return nodes.find((node) => node.port === port)!;
    },
    async replica() {
      const port = await masterPortNow();
      return nodes.find((node) => node.port !== port)!;
    },
    cli,
    async failedOver(killed) {
      await eventually(
        cliCheck(async () => {
          const port = await masterPortNow();
          if (port === killed.port) return false;
          return (await cli(port, 'info', 'replication')).includes('role:master');
        }),
        {
          what: 'the Sentinel to promote the replica',
          timeoutMs: 30_000,
          // The Sentinel logs each step (+sdown, +switch-master): the check runs on its lines.
          on: [[sentinel.log, 'data']],
          intervalMs: 500,
        },
      );
    },
    stop,
  };
}
