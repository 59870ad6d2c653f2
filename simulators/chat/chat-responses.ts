import type { ServerResponse } from 'node:http';
import { sendJson } from '../sim-server.js';
import type { ChatApiError } from './chat-errors.js';

/**
 * The success envelope (chat document 2.1): `result`, empty `msg`, the endpoint's data, and
 * from feature level 167 the parameters the endpoint ignored.
 */
export function sendSuccess(
  res: ServerResponse,
  data: Record<string, unknown>,
  ignored: readonly string[],
  featureLevel: number,
): void {
  const body: Record<string, unknown> = { result: 'success', msg: '', ...data };
  if (featureLevel >= 167 && ignored.length > 0) body.ignored_parameters_unsupported = ignored;
  sendJson(res, 200, body);
}

/** The one place an error becomes a response (chat document 7.1 plus Zulip's data fields). */
export function sendError(res: ServerResponse, error: ChatApiError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  sendJson(res, error.status, {
    result: 'error',
    msg: error.message,
    code: error.code,
    ...error.data,
  });
}
