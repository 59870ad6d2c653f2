import { defineConfig } from 'vitest/config';

/** A private redis-server for the project's run (test/setup/test-redis-server.ts). */
const withRedis = 'test/setup/test-redis-server.ts';

/*
 * Two groups, one after the other. First the in-process files, four at a time: they wait on
 * sockets and timers more than they compute, so four share two cores well. Then the files that
 * run gateways, Redis Clusters and Sentinels as child processes under load and judge them
 * against deadlines: two at a time, with the first group done. In both, each worker keeps its
 * modules from file to file (isolate: false); each file starts and stops its own processes.
 */
const inProcess = { maxWorkers: 4, isolate: false, sequence: { groupOrder: 0 } };
const childProcesses = { maxWorkers: 2, isolate: false, sequence: { groupOrder: 1 } };

export default defineConfig({
  test: {
    // The machines are shared and have 2 cores; deadline tests use generous margins.
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    projects: [
      {
        // One project, not one per folder: each project has its own module graph, so the
        // gateway's modules were transformed and imported once per project (18 s of CPU).
        extends: true,
        test: {
          ...inProcess,
          name: 'in-process',
          include: [
            'test/unit/**/*.test.ts',
            'test/static/**/*.test.ts',
            'test/integration/**/*.test.ts',
            'test/adversarial/**/*.test.ts',
            'test/simulators/**/*.test.ts',
            'test/hardening/**/*.test.ts',
            'test/races/**/*.test.ts',
            'test/e2e/**/*.test.ts',
          ],
          globalSetup: [withRedis],
        },
      },
      {
        extends: true,
        test: {
          ...childProcesses,
          name: 'fault',
          // scale-out: Redis Clusters and Sentinels of their own (test/harness/redis-topologies.ts).
          include: ['test/fault-injection/**/*.test.ts', 'test/scale-out/**/*.test.ts'],
          // They run the production build as a child process: never a stale one.
          globalSetup: [withRedis, 'test/harness/current-build.ts'],
        },
      },
    ],
  },
});
