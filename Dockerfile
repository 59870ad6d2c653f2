# Gateway image. Both stages use one base, pinned by tag: Node 22 LTS (Node 20 is end-of-life;
# package.json's engines allow both). test/static/container.test.ts checks this file.

# --- build: compile TypeScript to dist/ ---------------------------------------------------
FROM node:22-bookworm-slim AS build
WORKDIR /app
# The lockfile first, so the dependency layer is reused until it changes.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY config ./config
COPY src ./src
COPY simulators ./simulators
# No source maps in the image: they would ship the sources again.
RUN npm run build -- --sourceMap false

# --- runtime: production dependencies and the compiled output only ------------------------
FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production
# config/runtime.ts (GATEWAY_ENVIRONMENT): two malloc arenas rather than one per thread that
# allocates; the peak RSS under load is 2-8 MB lower, at no CPU cost measured.
ENV MALLOC_ARENA_MAX=2
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# No --chown: the code stays owned by root, so the process that runs it cannot rewrite it.
# dist holds the gateway and the simulators' entry point (dist/simulators/main.js), which only
# the compose file's `simulators` service starts; the demo page is static files.
COPY --from=build /app/dist ./dist
COPY simulators/demo-page ./simulators/demo-page
USER node
EXPOSE 3000
# Liveness via /healthz (GATEWAY-CONTRACT.md section 2) on OPS_PORT when set, else PORT, at
# HOST (loopback when it is every address). Node's own fetch: the slim image has no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "dist/src/healthcheck.js"]
# Exec form: node is PID 1 and receives SIGTERM itself, which starts the graceful drain.
# The node options of config/runtime.ts: the heap cap keeps the process under 160 MB RSS under
# load (npm run bench); the growing factor leaves room between full collections, so that V8
# does not mark again right after each one; without pretenuring, thousands of event streams
# opened first do not turn every later request's garbage into old-generation garbage; without
# the memory reducer, the first seconds of load after an idle spell cost what later ones do.
CMD ["node", "--max-old-space-size=128", "--heap-growing-percent=60", "--no-allocation-site-pretenuring", "--no-memory-reducer", "dist/src/main.js"]
