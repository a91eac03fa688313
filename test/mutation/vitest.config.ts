import { defineConfig } from 'vitest/config';
export default defineConfig({ test: { include: ['test/mutation/*.stryker.ts'], environment: 'node', testTimeout: 60_000 } });
