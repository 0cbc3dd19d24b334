import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources through this export condition,
// so tests never wait on a build and always see the code under edit.
// Only Node's own conditions besides ours: `module`/`import` would hand CommonJS packages (pg →
// pg-pool) or the AWS SDK their bundler builds, which Node cannot load.
const conditions = ['@agentstore/source', 'node', 'default'];

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
