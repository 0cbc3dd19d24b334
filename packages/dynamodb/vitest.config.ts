import { sharedConfig } from '../../vitest.shared.ts';

// One DynamoDB Local (a JVM) for all test files, started by the global setup; each file makes its
// own table. The global setup runs in Vitest's own `__vitest__` environment, which needs the
// shared resolution to import the workspace launcher from TypeScript.
export default {
  ...sharedConfig,
  environments: { __vitest__: { resolve: sharedConfig.ssr?.resolve } },
  test: { ...sharedConfig.test, globalSetup: ['test/support/global-setup.ts'] },
};
