import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

type Json = Record<string, unknown>;

/** One response the document does not describe: where, and why. */
export interface Drift {
  request: string;
  status: number;
  problem: string;
}

interface Operation {
  responses: Record<string, Json>;
}

interface Route {
  template: string;
  pattern: RegExp;
  operations: Record<string, Operation>;
}

/**
 * A document's routes and compiled schemas, built once per test worker and shared by every
 * checker of the same document: compiling them anew for each test gateway cost more than
 * most tests themselves.
 */
const compiledDocuments = new Map<string, ReturnType<typeof compileDocument>>();
/** The same, by the document object itself: a test gateway's document is generated once. */
const compiledObjects = new WeakMap<Json, ReturnType<typeof compileDocument>>();

function compiledDocument(document: Json) {
  let compiled = compiledObjects.get(document);
  if (compiled) return compiled;
  const key = JSON.stringify(document);
  compiled = compiledDocuments.get(key);
  if (!compiled) {
    compiled = compileDocument(document);
    compiledDocuments.set(key, compiled);
  }
  compiledObjects.set(document, compiled);
  return compiled;
}

function compileDocument(document: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  // The document's formats (date-time of session expiries) are checked, not ignored.
  formats.default(ajv);
  const components = document['components'] as Json;
  ajv.addSchema({ $id: 'openapi', components }, 'openapi');
  const compiled = new Map<string, ValidateFunction>();
  const routes: Route[] = Object.entries(document['paths'] as Record<string, Json>).map(
    ([template, operations]) => ({
      template,
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      operations: operations as Record<string, Operation>,
    }),
  );

  function validator(schema: Json): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile(rebase(schema));
      compiled.set(key, validate);
    }
    return validate;
  }

  return { ajv, components, routes, validator };
}

/**
 * Checks real responses against the gateway's own OpenAPI document: the route, the status and,
 * for JSON bodies, the body's schema. What a test receives through `wrap(handler)` is recorded;
 * `drift` lists every response the document does not describe, so a test file fails when the
 * code and the document part ways. Paths the document does not list (the frontend's files,
 * unknown paths) are not checked.
 */
export function createResponseChecker(document: Json) {
  const { ajv, components, routes, validator } = compiledDocument(document);
  const drift: Drift[] = [];
  let checked = 0;

  function responseFor(operation: Operation, status: number): Json | undefined {
    const exact = operation.responses[String(status)];
    const range = operation.responses[`${String(status)[0]}XX`];
    const found = exact ?? range ?? operation.responses['default'];
    if (found && typeof found['$ref'] === 'string') {
      const name = found['$ref'].split('/').pop() as string;
      return (components['responses'] as Record<string, Json>)[name];
    }
    return found;
  }

  function check(method: string, url: string, status: number, type: string, body: Buffer): void {
    const path = url.split('?')[0] ?? url;
    const route = routes.find((candidate) => candidate.pattern.test(path));
    // CORS preflights are the browser's, not operations of the API.
    if (!route || method === 'OPTIONS') return;
    checked += 1;
    const request = `${method} ${path}`;
    // HEAD is its GET without the body (RFC 9110 §9.3.2): Express answers it for every GET.
    const operation = route.operations[method === 'HEAD' ? 'get' : method.toLowerCase()];
    if (!operation) {
      // A method the route does not have: the document promises 405 for every route.
      const any = Object.values(route.operations)[0];
      if (status !== 405 || !any || !responseFor(any, 405)) {
        drift.push({ request, status, problem: `undocumented method for ${route.template}` });
      }
      return;
    }
    const response = responseFor(operation, status);
    if (!response) {
      drift.push({ request, status, problem: `status not documented for ${route.template}` });
      return;
    }
    const content = response['content'] as Record<string, Json> | undefined;
    if (status === 304 || method === 'HEAD' || body.length === 0) {
      if (content && body.length === 0 && status !== 304 && method !== 'HEAD') {
        drift.push({ request, status, problem: 'documented body missing' });
      }
      return;
    }
    const mediaType = type.split(';')[0]?.trim().toLowerCase() ?? '';
    const media = content?.[mediaType];
    if (!media) {
      drift.push({ request, status, problem: `media type ${mediaType} not documented` });
      return;
    }
    if (!mediaType.endsWith('json')) return;
    const validate = validator(media['schema'] as Json);
    if (!validate(JSON.parse(body.toString('utf8')))) {
      drift.push({ request, status, problem: ajv.errorsText(validate.errors) });
    }
  }

  return {
    drift,
    /** How many responses matched a documented route: a check that saw nothing proves nothing. */
    get checked() {
      return checked;
    },
    /** The handler, with every response it sends recorded and checked. */
    wrap(handler: RequestListener): RequestListener {
      return (req: IncomingMessage, res: ServerResponse) => {
        // As the client sent it: routers and the proxy rewrite req.url on the way.
        const { method = 'GET', url = '/' } = req;
        const chunks: Buffer[] = [];
        const write = res.write.bind(res) as (...args: unknown[]) => boolean;
        const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
        const keep = (chunk: unknown) => {
          if (typeof chunk === 'string') chunks.push(Buffer.from(chunk));
          else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
        };
        res.write = ((chunk: unknown, ...rest: unknown[]) => {
          keep(chunk);
          return write(chunk, ...rest);
        }) as typeof res.write;
        // Checked as the response ends, so the result is there when the client has its answer.
        res.end = ((chunk?: unknown, ...rest: unknown[]) => {
          if (typeof chunk !== 'function') keep(chunk);
          const ended = end(chunk, ...rest);
          check(
            method,
            url,
            res.statusCode,
            String(res.getHeader('content-type') ?? ''),
            decoded(Buffer.concat(chunks), res.getHeader('content-encoding')),
          );
          return ended;
        }) as typeof res.end;
        handler(req, res);
      };
    },
  };
}

/** The body as it was before its content coding: the document describes that. */
function decoded(body: Buffer, coding: unknown): Buffer {
  if (body.length === 0) return body;
  if (coding === 'br') return brotliDecompressSync(body);
  if (coding === 'gzip') return gunzipSync(body);
  return body;
}

/** `#/components/...` references, pointed at the schema registered as `openapi`. */
function rebase(schema: Json): Json {
  return JSON.parse(
    JSON.stringify(schema).replaceAll('"$ref":"#/components/', '"$ref":"openapi#/components/'),
  ) as Json;
}
