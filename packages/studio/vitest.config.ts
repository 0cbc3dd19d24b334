import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.ts';

export default mergeConfig(
  sharedConfig,
  defineConfig({
    test: {
      // One seeded SQLite file (runs of run(), a 10,000-message session) for every test file.
      globalSetup: ['test/helpers/global-setup.ts'],
      testTimeout: 20_000,
    },
  }),
);
