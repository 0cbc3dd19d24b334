/**
 * Scripted models, fault-injecting stores and store targets for tests.
 * @module @agentstore/core/testing
 */
import { createInMemoryStore, type MemoryStoreOptions } from '../memory-store.ts';
import type { AgentStore } from '../store/contract.ts';

export {
  crashAfterToolResults,
  type FaultableOp,
  type FaultPlan,
  type FaultyStore,
  faultyStore,
  isSimulatedCrash,
  type RenewFault,
  type RenewFaultStore,
  renewFaults,
  SimulatedAckLostError,
  SimulatedCrashError,
  SimulatedNetworkError,
} from './fault-store.ts';
export { type ScriptedLlm, type ScriptStep, scriptedLlm, unreachableLlm } from './scripted-llm.ts';

/**
 * An in-process store that claims durability, for tests of crash and resume within one process.
 * Never use it in production: nothing survives the process.
 */
export function durableMemoryStore(options: MemoryStoreOptions = {}): AgentStore {
  return createInMemoryStore(true, options);
}
export type {
  ConformanceTarget,
  DurabilitySettings,
  OpenTestTarget,
  RawAppendFloor,
  RawMessageRow,
  RawReader,
  RawSessionRow,
  StoreCapabilities,
} from './store-target.ts';
export { roundTripCounters, type TargetServer, targetOnServer, withServer } from './store-target.ts';
export {
  openTargetModule,
  openToolTarget,
  TARGET_MODULE_ENV,
  targetFromModule,
} from './target-module.ts';
