import type { LeaseLostError } from '../errors.ts';
import type { DurableLedger } from './durable-ledger.ts';
import type { LeaseKeeper } from './lease-keeper.ts';
import type { LeaseMachine } from './lease-state.ts';
import type { MessageLedger } from './message-ledger.ts';
import type { StoreWaits } from './store-waits.ts';

/** The durable ledger as the loop commits through it, under the run's lease. */
export interface DurableCommits {
  ledger: MessageLedger;
  /** The commit still running, if any (commits are strictly sequential). */
  inFlight(): Promise<unknown> | null;
  /** Settles once every append sent has answered (see DurableLedger). */
  appendsSettled(): Promise<void>;
  /** Whether an append may still land though its commit failed (see DurableLedger). */
  readonly outcomeUnconfirmed: boolean;
}

/**
 * Wraps the durable ledger for the run: no commit starts after the lease's local deadline; the
 * final append (the one carrying `releaseLease`) moves the lease machine through releasing to
 * released (or back to held when it fails); an append refused as our lost lease tells the whole
 * run at once. A commit is not cut short by the caller's abort (results of finished handlers are
 * still sent; run() stops waiting through `callerBound` instead), only by a lost lease.
 */
export function durableCommits(input: {
  base: DurableLedger;
  keeper: LeaseKeeper;
  machine: LeaseMachine;
  waits: StoreWaits;
  /** Whether an error says this run's own lease is lost. */
  isOurLeaseLost: (error: unknown) => boolean;
}): DurableCommits {
  const { base, keeper, machine, waits } = input;
  // The one mutable fact here: which commit is running (for the end of a run the caller left).
  let running: Promise<unknown> | null = null;
  const ledger: MessageLedger = {
    get headSeq() {
      return base.headSeq;
    },
    limits: base.limits,
    commit(batch, options) {
      // Checked here too, so a commit after the deadline never starts (the ledger checks again
      // before every attempt; the keeper's watch bounds an attempt that never answers).
      keeper.assertHeld();
      const releasing = options?.releaseLease === true;
      // The run's last append frees the lease itself: a renewal racing it is refused.
      if (releasing) machine.dispatch({ type: 'release-sent', via: 'final-append' });
      const sent = base.commit(batch, options);
      running = sent;
      sent.then(
        () => {
          if (running === sent) running = null;
          if (releasing) machine.dispatch({ type: 'release-landed' });
        },
        (error: unknown) => {
          if (running === sent) running = null;
          // Refused as a lost lease: the whole run learns it now (sibling calls of the step
          // included), not at the next renewal.
          if (input.isOurLeaseLost(error)) keeper.lost(error as LeaseLostError);
          if (releasing) machine.dispatch({ type: 'release-failed' });
        },
      );
      return waits.whileHeld(sent);
    },
  };
  return {
    ledger,
    inFlight: () => running,
    appendsSettled: () => base.appendsSettled(),
    get outcomeUnconfirmed() {
      return base.outcomeUnconfirmed;
    },
  };
}
