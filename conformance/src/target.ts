// The target types live in @agentstore/core/testing so adapters can publish test targets
// without depending on the kit; the kit re-exports them under their familiar names.
export type {
  ConformanceTarget,
  DurabilitySettings,
  OpenTestTarget,
  RawAppendFloor,
  RawMessageRow,
  RawReader,
  RawSessionRow,
  StoreCapabilities,
} from '@agentstore/core/testing';
