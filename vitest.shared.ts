import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources through this export condition,
// so tests never wait on a build and always see the code under edit.
const conditions = ['@agentstore/source', 'module', 'node', 'import', 'default'];

export const sharedConfig = defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['@agentstore/source'] } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    typecheck: { enabled: true, include: ['src/**/*.test-d.ts', 'test/**/*.test-d.ts'] },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
