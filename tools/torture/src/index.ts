/**
 * Crash torture for any target module: `runTorture`, `runCleanTorture` (throws on a violation)
 * and `formatReport`, the library behind the `agentstore-torture` bin.
 * @module @agentstore/torture
 */
export { runCleanTorture } from './clean-run.ts';
export { type Ledger, type LedgerCall, startLedger } from './ledger.ts';
export { createPrng, deriveSeed, type Prng } from './prng.ts';
export { formatReport } from './report.ts';
export {
  runTorture,
  type ScenarioSummary,
  type StoreReport,
  type TortureOptions,
  type TortureReport,
  type Violation,
} from './runner.ts';
