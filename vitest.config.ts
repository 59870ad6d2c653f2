import { defineConfig } from 'vitest/config';

/** A private redis-server for the project's run (test/setup/test-redis-server.ts). */
const withRedis = 'test/setup/test-redis-server.ts';

export default defineConfig({
  test: {
    // The machines are shared and have 2 cores; deadline tests use generous margins.
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts', 'test/static/**/*.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: [
            'test/integration/**/*.test.ts',
            'test/adversarial/**/*.test.ts',
            'test/simulators/**/*.test.ts',
            'test/hardening/**/*.test.ts',
            'test/races/**/*.test.ts',
          ],
          globalSetup: [withRedis],
        },
      },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], globalSetup: [withRedis] },
      },
      {
        extends: true,
        // Redis Cluster and Sentinel of their own (test/harness/redis-topologies.ts).
        test: { name: 'scale-out', include: ['test/scale-out/**/*.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'fault',
          include: ['test/fault-injection/**/*.test.ts'],
          // They run the production build as a child process: never a stale one.
          globalSetup: [withRedis, 'test/harness/current-build.ts'],
        },
      },
    ],
  },
});
