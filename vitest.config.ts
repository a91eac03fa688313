import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    reporters: ['default'],
    // Three test files at a time (vitest's default is one less than the cores: one file at a time on CI's 2 cores).
    // Many files wait on real processes (kubectl, kube-apiserver, etcd, chromium, child CLIs) more than they compute,
    // so a third worker overlaps those waits: a full run went from ~36 to ~27 min on a loaded 2-core machine
    // (issue 33). VITEST_MAX_WORKERS overrides it.
    maxWorkers: 3,
  },
});
