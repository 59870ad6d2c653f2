/**
 * Where the container's HEALTHCHECK probes the gateway from inside the container: the operations
 * port when OPS_PORT is set (its /healthz answers while the public port is flooded), else PORT;
 * the address it listens on (HOST), or loopback when it listens on every address.
 */
export function healthcheckUrl(env: Readonly<Record<string, string | undefined>>): string {
  const host = (env['HOST'] ?? '').trim();
  const address =
    host === '' || host === '0.0.0.0'
      ? '127.0.0.1'
      : host === '::'
        ? '[::1]'
        : host.includes(':')
          ? `[${host}]`
          : host;
  const port = env['OPS_PORT'] || env['PORT'] || '3000';
  return `http://${address}:${port}/healthz`;
}
