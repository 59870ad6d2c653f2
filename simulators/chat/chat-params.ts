import { badRequest } from './chat-errors.js';

/**
 * Request parameters read the way Zulip's typed_endpoint reads them: the form body first, then
 * the query string, the last value of a repeated name (Django's QueryDict), and every name an
 * endpoint did not read reported back in `ignored_parameters_unsupported`.
 */
export interface ChatParams {
  /** The raw value, or undefined when absent; marks the name as supported. */
  take(name: string): string | undefined;
  /** A `Json[bool]` parameter: only the JSON literals `true` and `false` are booleans. */
  takeJsonBool(name: string, fallback: boolean): boolean;
  /** Names the endpoint never read, sorted, as Zulip reports them. */
  ignored(): string[];
}

/**
 * Never reported as ignored on any endpoint: Zulip reads `client` in its
 * request-logging middleware before any view runs.
 */
const ALWAYS_PROCESSED = ['client'];

export function createChatParams(query: URLSearchParams, body: URLSearchParams): ChatParams {
  const processed = new Set<string>(ALWAYS_PROCESSED);

  const take = (name: string): string | undefined => {
    const fromBody = body.getAll(name);
    const values = fromBody.length > 0 ? fromBody : query.getAll(name);
    if (values.length === 0) return undefined;
    processed.add(name);
    return values[values.length - 1];
  };

  return {
    take,
    takeJsonBool(name, fallback) {
      const raw = take(name);
      if (raw === undefined) return fallback;
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        // Zulip's ERROR_TEMPLATES["json_invalid"]: `yes`, `True` and '' are not JSON.
        throw badRequest(`${name} is not valid JSON`);
      }
      // Validation is strict in Zulip (validate_python(..., strict=True)): 1 and "true" fail.
      if (typeof parsed !== 'boolean') throw badRequest(`${name} is not a boolean`);
      return parsed;
    },
    ignored() {
      const names = new Set([...body.keys(), ...query.keys()]);
      return [...names].filter((name) => !processed.has(name)).sort();
    },
  };
}

/**
 * Form bodies only: like Django, a JSON or other body yields no parameters at all, so a client
 * that posts JSON sees its fields ignored.
 */
export function parseFormBody(contentType: string | undefined, body: string): URLSearchParams {
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  return mediaType === 'application/x-www-form-urlencoded'
    ? new URLSearchParams(body)
    : new URLSearchParams();
}
