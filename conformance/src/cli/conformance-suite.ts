// The test file the CLI hands to vitest: it loads the user's module (through vitest, so
// TypeScript works) and registers the whole kit for the target it exports.

import { TARGET_MODULE_ENV, targetFromModule } from '@agentstore/core/testing';
import { describeAgentStoreConformance } from '../describe.ts';

const modulePath = process.env[TARGET_MODULE_ENV];
if (!modulePath) {
  throw new Error(`${TARGET_MODULE_ENV} is not set; run this suite through the agentstore-conformance CLI`);
}
// Imported through vitest (not `openTargetModule`), so a TypeScript target works as is.
const namespace = (await import(/* @vite-ignore */ modulePath)) as Record<string, unknown>;
describeAgentStoreConformance(await targetFromModule(namespace, modulePath));
