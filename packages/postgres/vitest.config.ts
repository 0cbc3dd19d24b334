import { sharedConfig } from '../../vitest.shared.ts';

export default {
  ...sharedConfig,
  // The shared config hands Node the `import` condition for external packages too, so pg's CJS
  // `require('pg-pool')` gets pg-pool's ESM build and `class extends Pool` fails. Externals here
  // resolve with Node's own conditions; workspace sources still come through @agentstore/source.
  ssr: {
    ...sharedConfig.ssr,
    resolve: { ...sharedConfig.ssr?.resolve, conditions: ['@agentstore/source', 'node', 'default'] },
  },
  test: {
    ...sharedConfig.test,
    // One file at a time: the kit's perf gate compares latencies, and the 256 MiB limits test
    // running beside it on two cores would make that comparison noise.
    fileParallelism: false,
  },
};
