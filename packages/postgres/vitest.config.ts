import { sharedConfig } from '../../vitest.shared.ts';

// The shared config hands Node the `import` condition for external packages too, so pg's CJS
// `require('pg-pool')` gets pg-pool's ESM build and `class extends Pool` fails. Externals here
// resolve with Node's own conditions; workspace sources still come through @agentstore/source.
export default {
  ...sharedConfig,
  ssr: {
    ...sharedConfig.ssr,
    resolve: { ...sharedConfig.ssr?.resolve, conditions: ['@agentstore/source', 'node', 'default'] },
  },
};
