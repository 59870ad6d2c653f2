import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import {
  OpenAPIBackend,
  OpenAPIValidator,
  ValidationContext,
  type Document,
  type Operation,
  type ValidationResult,
} from 'openapi-backend';
import { parse } from 'yaml';
import { isObject, normalizeDefinition, type Json } from './zulip-openapi-normalize.js';

/**
 * Validates requests and responses against Zulip's published OpenAPI extract
 * (test/fixtures/zulip-openapi.yaml, a copy of shared/upstream/zulip-openapi.yaml), loaded with openapi-backend. Paths are relative to the
 * file's server prefix /api/v1 (a leading /api/v1 and a query string are accepted and removed).
 *
 * The YAML is never edited; a deep copy is adapted in memory where the file, read literally,
 * cannot be applied by a JSON Schema validator (see zulip-openapi-normalize.ts).
 */
export interface ZulipOpenApiValidator {
  /** Errors of a response body for that status; [] when it matches the documented schema. */
  validateResponse(method: string, path: string, status: number, body: unknown): string[];
  /** Errors of an outgoing request: route, path/query/body schemas, form encoding, Basic auth. */
  validateRequest(request: ZulipRequest): string[];
  /** Errors of a value against a named schema of components/schemas, e.g. CodedError. */
  validateSchema(name: string, value: unknown): string[];
  /** The operationId the router picks for a method and path, if any. */
  operationId(method: string, path: string): string | undefined;
}

export interface ZulipRequest {
  method: string;
  path: string;
  query?: string | URLSearchParams | Record<string, string>;
  headers?: Record<string, string | string[] | undefined>;
  /** A raw body as sent (form-encoded string) or already-parsed form fields. */
  body?: string | Record<string, unknown>;
}

export interface ZulipOpenApiOptions {
  /** Defaults to the copy in test/fixtures. */
  specPath?: string;
}

const DEFAULT_SPEC = fileURLToPath(new URL('../fixtures/zulip-openapi.yaml', import.meta.url));

/** "Common error to many endpoints": consulted for statuses an operation does not list. */
const COMMON_ERRORS_OPERATION = 'rest-error-handling';

function formatErrors(context: string, errors: ValidationResult['errors']): string[] {
  return (errors ?? []).map((error) => {
    const where = error.instancePath === '' ? '(root)' : error.instancePath;
    const params = Object.keys(error.params).length > 0 ? ` ${JSON.stringify(error.params)}` : '';
    return `${context}: ${where} ${error.message ?? error.keyword}${params}`;
  });
}

function relativePath(path: string): { path: string; query: string } {
  const [pathname = '', query = ''] = path.split('?', 2);
  const relative = pathname.startsWith('/api/v1/') ? pathname.slice('/api/v1'.length) : pathname;
  return { path: relative.startsWith('/') ? relative : `/${relative}`, query };
}

function header(headers: ZulipRequest['headers'], name: string): string | undefined {
  const entry = Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === name);
  const value = entry?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/** The form fields of a body, last value winning like Zulip; JSON-encoded fields decoded. */
function parseFormFields(
  operation: Operation,
  request: ZulipRequest,
  errors: string[],
): Json | undefined {
  if (request.body === undefined) return undefined;
  const requestBody = operation.requestBody as Json | undefined;
  const content = requestBody?.content;
  const form = isObject(content) ? content['application/x-www-form-urlencoded'] : undefined;
  const mediaType = header(request.headers, 'content-type')?.split(';')[0]?.trim().toLowerCase();
  if (typeof request.body === 'string' && mediaType !== 'application/x-www-form-urlencoded') {
    errors.push(`request body: Zulip reads form-encoded bodies only, got ${mediaType ?? 'none'}`);
    return undefined;
  }
  const fields: Json =
    typeof request.body === 'string'
      ? Object.fromEntries(new URLSearchParams(request.body))
      : { ...request.body };
  const encoding = isObject(form) && isObject(form.encoding) ? form.encoding : {};
  for (const [name, value] of Object.entries(fields)) {
    const encoded = encoding[name];
    if (!isObject(encoded) || encoded.contentType !== 'application/json') continue;
    if (typeof value !== 'string') continue;
    try {
      fields[name] = JSON.parse(value) as unknown;
    } catch {
      errors.push(`request body: /${name} is not valid JSON`);
    }
  }
  return fields;
}

/**
 * The operation's security requirement, resolving scheme names case-insensitively because the
 * file's top level names `basicAuth` while the scheme is declared as `BasicAuth`.
 */
function checkBasicAuth(definition: Json, operation: Operation, request: ZulipRequest): string[] {
  const requirements = (operation.security ?? []) as Json[];
  if (requirements.length === 0) return [];
  const components = isObject(definition.components) ? definition.components : {};
  const schemes = isObject(components.securitySchemes) ? components.securitySchemes : {};
  const wantsBasic = requirements.some((requirement) =>
    Object.keys(requirement).some((name) => {
      const scheme = Object.entries(schemes).find(
        ([declared]) => declared.toLowerCase() === name.toLowerCase(),
      )?.[1];
      return isObject(scheme) && scheme.type === 'http' && scheme.scheme === 'basic';
    }),
  );
  if (!wantsBasic) return [];
  const [scheme = '', encoded = ''] = (header(request.headers, 'authorization') ?? '').split(' ');
  const credentials = Buffer.from(encoded, 'base64').toString('utf8').split(':');
  const valid =
    scheme.toLowerCase() === 'basic' &&
    credentials.length === 2 &&
    credentials.every((part) => part.length > 0);
  return valid ? [] : ['request headers: missing or malformed Basic credentials (email:API key)'];
}

export async function createZulipOpenApiValidator(
  options: ZulipOpenApiOptions = {},
): Promise<ZulipOpenApiValidator> {
  const raw = parse(await readFile(options.specPath ?? DEFAULT_SPEC, 'utf8')) as Json;
  const definition = normalizeDefinition(structuredClone(raw));
  // strict: a definition openapi-backend cannot read fails here, not as a silent pass later.
  // Its own validator would compile every operation's schemas at init (4 s per test file);
  // this one compiles an operation's schemas when a test first checks that operation.
  const api = new OpenAPIBackend<Document>({
    definition: definition as unknown as Document,
    strict: true,
    validate: false,
  });
  await api.init();
  const validator = new OpenAPIValidator({
    definition: api.definition,
    router: api.router,
    lazyCompileValidators: true,
  });
  const schemaAjv = validator.getAjv(ValidationContext.Response);
  const commonErrors = api.getOperation(COMMON_ERRORS_OPERATION);

  const match = (method: string, path: string): Operation | undefined =>
    api.matchOperation({ method, path: relativePath(path).path, headers: {} });

  const documents = (operation: Operation | undefined, status: number): boolean => {
    const responses = operation?.responses ?? {};
    return [String(status), `${Math.floor(status / 100)}XX`, 'default'].some(
      (key) => key in responses,
    );
  };

  return {
    operationId: (method, path) => match(method, path)?.operationId,

    validateResponse(method, path, status, body) {
      const operation = match(method, path);
      const label = `${method.toUpperCase()} ${relativePath(path).path}`;
      if (!operation) return [`${label}: no operation in the OpenAPI file`];
      const source = documents(operation, status)
        ? operation
        : documents(commonErrors, status)
          ? commonErrors
          : undefined;
      if (!source) {
        return [
          `${label}: status ${status} is documented neither by ${operation.operationId} nor by /rest-error-handling`,
        ];
      }
      const result = validator.validateResponse(body, source, status);
      return formatErrors(`response ${source.operationId} ${status}`, result.errors);
    },

    validateRequest(request) {
      const { path, query: pathQuery } = relativePath(request.path);
      const operation = match(request.method, path);
      const label = `${request.method.toUpperCase()} ${path}`;
      if (!operation) return [`${label}: no operation in the OpenAPI file`];
      const errors: string[] = [];
      const queryText =
        typeof request.query === 'string' || request.query instanceof URLSearchParams
          ? String(request.query)
          : new URLSearchParams(request.query ?? pathQuery).toString();
      const query = Object.fromEntries(new URLSearchParams(queryText));
      const body = parseFormFields(operation, request, errors);
      const headers = Object.fromEntries(
        Object.entries(request.headers ?? {}).flatMap(([key, value]) =>
          value === undefined ? [] : [[key.toLowerCase(), value]],
        ),
      );
      try {
        const result = validator.validateRequest(
          { method: request.method, path, headers, query, ...(body ? { body } : {}) },
          operation,
        );
        errors.push(...formatErrors(`request ${operation.operationId}`, result.errors));
      } catch (error) {
        // openapi-backend 5.20 throws (rather than reports) when a JSON-encoded parameter is
        // not JSON; that is a fault of the request all the same.
        errors.push(
          `request ${operation.operationId} query (${Object.keys(query).join(', ')}): ${(error as Error).message}`,
        );
      }
      errors.push(...checkBasicAuth(definition, operation, request));
      return errors;
    },

    validateSchema(name, value) {
      const schemas = api.definition.components?.schemas ?? {};
      const schema = schemas[name];
      if (!schema) return [`components/schemas has no ${name}`];
      const validate = schemaAjv.compile(schema);
      validate(value);
      return formatErrors(`schema ${name}`, validate.errors);
    },
  };
}
