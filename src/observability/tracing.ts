import { register } from 'node:module';
import type { Logger } from 'pino';
import type { Config } from '../../config/load-config.js';
import { markSdkActive } from './trace-context.js';

/** The packages the instrumentations patch: only these go through the ESM import hook. */
const INSTRUMENTED = ['express', 'ioredis', 'node:http', 'http', 'node:https', 'https'];

/** Probes and scrapes every few seconds are not traces anyone wants to read. */
const UNTRACED = new Set(['/healthz', '/readyz', '/metrics']);

export interface Tracing {
  /** Flushes the spans still queued and stops the exporter. */
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry (contract section 6) when an OTLP endpoint is configured: a Node tracer
 * provider exporting over OTLP/HTTP, and the http, express, undici and ioredis
 * instrumentations. Called by `main` before the gateway's own modules are imported, so the
 * ESM hook sees express and ioredis load; with no endpoint nothing is loaded at all. The SDK
 * reads the standard `OTEL_*` variables itself (endpoint, headers, sampler, resource).
 */
export async function startTracing(
  tracing: Config['tracing'],
  logger: Logger,
): Promise<Tracing | undefined> {
  if (tracing.endpoint === undefined) return undefined;
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, {
    data: { include: INSTRUMENTED },
  });
  const [
    { trace },
    { NodeTracerProvider, BatchSpanProcessor },
    resources,
    { registerInstrumentations },
    { HttpInstrumentation },
    { ExpressInstrumentation, ExpressLayerType },
    { UndiciInstrumentation },
    { IORedisInstrumentation },
    exporter,
  ] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-express'),
    import('@opentelemetry/instrumentation-undici'),
    import('@opentelemetry/instrumentation-ioredis'),
    tracing.protocol === 'http/json'
      ? import('@opentelemetry/exporter-trace-otlp-http')
      : import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the default name.
  const resource = resources
    .resourceFromAttributes({ 'service.name': tracing.serviceName })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new exporter.OTLPTraceExporter())],
  });
  // The W3C trace-context propagator and an AsyncLocalStorage context manager.
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED.has((req.url ?? '').split('?')[0] ?? ''),
        // No header values on spans: they may carry credentials.
        headersToSpanAttributes: { client: {}, server: {} },
      }),
      // The route handler's span; one per middleware and router would bury it.
      new ExpressInstrumentation({
        ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER],
      }),
      new UndiciInstrumentation(),
      // Redis commands only as parts of a request or an upstream call, with no arguments.
      new IORedisInstrumentation({
        requireParentSpan: true,
        dbStatementSerializer: (name) => name,
      }),
    ],
  });
  markSdkActive(() => trace.getActiveSpan());
  logger.info(
    { endpoint: redactUrl(tracing.endpoint), protocol: tracing.protocol },
    'tracing on: spans go over OTLP/HTTP',
  );
  return {
    async shutdown() {
      await provider.shutdown().catch((error: unknown) => {
        logger.warn({ err: error }, 'flushing spans at stop failed');
      });
    },
  };
}

/** An endpoint as a log line may show it: no credentials, no query. */
function redactUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}
