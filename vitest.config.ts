import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The machines are shared and have 2 cores; deadline tests use generous margins.
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
  },
});
