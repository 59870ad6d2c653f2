import { describe, expect, it } from 'vitest';
import { CENSOR, REDACTED_KEYS, redactLine } from '../../src/logging/redact-line.js';
import { createLogCapture } from '../helpers/log-capture.js';

const CREDENTIAL = 'canary-credential-4f1d2a';

describe('log redaction', () => {
  it.each(REDACTED_KEYS)(
    'when a line holds "%s" at the top, nested in a field, in a child binding or in an array, then its value is blanked there and nowhere else',
    (key) => {
      const logs = createLogCapture();
      logs.logger.child({ req: { headers: { [key]: CREDENTIAL, accept: 'text/html' } } }).warn(
        {
          [key]: CREDENTIAL,
          upstream: { [key]: CREDENTIAL, status: 401 },
          attempts: [{ [key]: { nested: CREDENTIAL } }],
        },
        'login refused',
      );
      expect(logs.text()).not.toContain(CREDENTIAL);
      const [line] = logs.lines();
      expect(line).toMatchObject({
        [key]: CENSOR,
        req: { headers: { [key]: CENSOR, accept: 'text/html' } },
        upstream: { [key]: CENSOR, status: 401 },
        attempts: [{ [key]: CENSOR }],
        msg: 'login refused',
      });
    },
  );

  it('when an error carries a credential among its properties, then the serialized error has it blanked', () => {
    const logs = createLogCapture();
    const error = Object.assign(new Error('upstream refused'), {
      config: { headers: { authorization: `Basic ${CREDENTIAL}` } },
    });
    logs.logger.error({ err: error }, 'chat call failed');
    expect(logs.text()).not.toContain(CREDENTIAL);
  });

  it('when a line names no credential key, then it is written byte for byte as pino made it', () => {
    const line = `${JSON.stringify({ level: 30, req: { id: 'a', url: '/api/search?q=token' }, msg: 'x' })}\n`;
    expect(redactLine(line)).toBe(line);
  });

  it('when a credential key is only text inside a string value, then the line keeps its content', () => {
    const line = `${JSON.stringify({ level: 30, msg: 'the body was {"token":"abc"}' })}\n`;
    expect(JSON.parse(redactLine(line))).toEqual(JSON.parse(line));
  });

  it('when a line names a credential key but is not JSON, then it is withheld rather than written', () => {
    const out = redactLine(`{"token":"${CREDENTIAL}" oops\n`);
    expect(out).not.toContain(CREDENTIAL);
    expect(JSON.parse(out)).toMatchObject({ level: 50 });
  });

  it('when configured secrets are set, then both the key rule and the by-value scrubber apply', () => {
    const secret = 'configured-secret-9a8b7c';
    const logs = createLogCapture('debug', [secret]);
    logs.logger.info({ password: CREDENTIAL, detail: `echoed ${secret}` }, 'upstream said');
    expect(logs.text()).not.toContain(CREDENTIAL);
    expect(logs.text()).not.toContain(secret);
    expect(logs.lines()[0]).toMatchObject({ password: CENSOR, detail: `echoed ${CENSOR}` });
  });
});
