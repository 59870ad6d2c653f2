import { healthcheckUrl } from './health/healthcheck-url.js';

/**
 * The image's HEALTHCHECK (`node dist/src/healthcheck.js`): exit 0 on /healthz's 200, 1 on
 * anything else, a refusal or no answer within 3 s. The slim image has no curl.
 */
try {
  const res = await fetch(healthcheckUrl(process.env), { signal: AbortSignal.timeout(3000) });
  process.exit(res.ok ? 0 : 1);
} catch {
  process.exit(1);
}
