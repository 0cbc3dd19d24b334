import { sharedConfig } from '../../vitest.shared.ts';

export default {
  ...sharedConfig,
  test: {
    ...sharedConfig.test,
    // One file at a time: the kit's perf gate compares latencies, and the 256 MiB limits test
    // running beside it on two cores would make that comparison noise.
    fileParallelism: false,
  },
};
