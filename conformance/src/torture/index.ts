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
