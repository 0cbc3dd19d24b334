import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.ts';

// Mutation runs: the same tests without the type-level tests (typecheck is not run per mutant).
export default mergeConfig(sharedConfig, defineConfig({ test: { typecheck: { enabled: false } } }));
