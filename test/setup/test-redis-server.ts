import type { TestProject } from 'vitest/node';
import { startRedisServer } from '../harness/chaos-processes.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Redis every test that needs one talks to (its own key prefix each). */
    redisUrl: string;
  }
}

/**
 * Vitest global setup: a private redis-server for the whole run on a free loopback port,
 * stopped at the end, unless TEST_REDIS_URL names one to use instead. The tests never depend
 * on a Redis the machine may or may not run.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env['TEST_REDIS_URL'];
  if (given) {
    project.provide('redisUrl', given);
    return () => Promise.resolve();
  }
  const redis = await startRedisServer();
  project.provide('redisUrl', redis.url);
  return () => redis.stop();
}
