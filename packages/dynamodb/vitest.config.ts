import { sharedConfig } from '../../vitest.shared.ts';

// The AWS SDK's exports list `module` (dist-es, an ES build for bundlers whose imports lack file
// extensions, which Node cannot load) before `node`; externals here resolve with Node's own
// conditions, so the SDK loads as Node loads it. Workspace sources still come through
// @agentstore/source.
const resolve = { ...sharedConfig.ssr?.resolve, conditions: ['@agentstore/source', 'node', 'default'] };

// One DynamoDB Local (a JVM) for all test files, started by the global setup; each file makes its
// own table. The global setup runs in Vitest's own `__vitest__` environment, which needs the same
// resolution to import the workspace launcher from TypeScript.
export default {
  ...sharedConfig,
  ssr: { ...sharedConfig.ssr, resolve },
  environments: { __vitest__: { resolve } },
  test: { ...sharedConfig.test, globalSetup: ['test/support/global-setup.ts'] },
};
