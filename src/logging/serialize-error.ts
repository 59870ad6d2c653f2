/**
 * An error as a log line carries it (issue 19, item 6): its type, name, code, message and stack,
 * once each, its own fields, and its cause and an AggregateError's errors the same way, nested.
 * pino's standard serializer copies every enumerable property, inherited ones too, so a
 * DOMException (an AbortSignal timeout) brought its 25 legacy constants (`INDEX_SIZE_ERR` …
 * `DATA_CLONE_ERR`), and it folds causes into one message and one stack.
 *
 * ioredis puts a command's arguments on its errors (the password of a refused AUTH, a session
 * record, a key): only the command's name is kept.
 */
export function serializeError(error: unknown): unknown {
  return serialize(error, new Set(), 0);
}

/** Deeper causes than this are cut: a chain that long says nothing more. */
const MAX_DEPTH = 5;

function serialize(error: unknown, seen: Set<object>, depth: number): unknown {
  if (typeof error !== 'object' || error === null) return error;
  if (seen.has(error)) return '[circular]';
  if (depth > MAX_DEPTH) return '[too deep]';
  seen.add(error);
  // The line's fields in the order it reads: type, name, message, own fields, code, stack, causes.
  const line: Record<string, unknown> = {};
  if (error instanceof Error) addHeadline(line, error);
  addOwnFields(line, error);
  addCodeAndStack(line, error);
  addNested(line, error, seen, depth + 1);
  return line;
}

function addHeadline(line: Record<string, unknown>, error: Error): void {
  line['type'] = error.constructor.name;
  if (error.name !== line['type']) line['name'] = error.name;
  line['message'] = error.message;
}

function addOwnFields(line: Record<string, unknown>, error: object): void {
  for (const [key, value] of Object.entries(error)) {
    if (key === 'cause' || key === 'errors' || typeof value === 'function') continue;
    line[key] = key === 'command' ? commandName(value) : value;
  }
}

function addCodeAndStack(line: Record<string, unknown>, error: object): void {
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) line['code'] = code;
  if (error instanceof Error && error.stack !== undefined) line['stack'] = error.stack;
}

/** The cause and an AggregateError's errors, serialised the same way one level down. */
function addNested(
  line: Record<string, unknown>,
  error: object,
  seen: Set<object>,
  depth: number,
): void {
  const { cause } = error as { cause?: unknown };
  if (cause !== undefined) line['cause'] = serialize(cause, seen, depth);
  if (error instanceof AggregateError) {
    line['errors'] = error.errors.map((inner) => serialize(inner, seen, depth));
  }
}

function commandName(command: unknown): unknown {
  if (typeof command !== 'object' || command === null) return command;
  return { name: (command as { name?: unknown }).name };
}
