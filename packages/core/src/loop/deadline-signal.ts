/*
 * `ctx.signal` checks the lease's local deadline when it is read. A handler resumed after a pause
 * (SIGSTOP, a long GC, a blocked event loop) can read `ctx.signal` before the keeper's abort
 * timer had a chance to run: an I/O answer or an earlier timer is processed first. So reading
 * `aborted` or calling `throwIfAborted()` runs the deadline check synchronously, and the check
 * right before an effect is never stale.
 *
 * Done with a subtype, not by patching: the run's signal gets a prototype that extends
 * `AbortSignal.prototype` with those two members. `AbortSignal` itself and every other signal are
 * untouched, and the run's signal stays a real AbortSignal (its internal slots are intact, so
 * fetch and friends accept it). The check is looked up per signal and removed when the run ends.
 */

const checks = new WeakMap<AbortSignal, () => void>();

const abortedGetter = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')?.get;

/** Runs the signal's deadline check; a check that throws has aborted the signal (or it already was). */
function poll(signal: AbortSignal): void {
  try {
    checks.get(signal)?.();
  } catch {
    // the read that follows reports the abort
  }
}

const deadlineCheckedPrototype: AbortSignal = Object.create(AbortSignal.prototype, {
  aborted: {
    configurable: true,
    get(this: AbortSignal) {
      poll(this);
      return abortedGetter?.call(this) as boolean;
    },
  },
  throwIfAborted: {
    configurable: true,
    writable: true,
    value(this: AbortSignal) {
      poll(this);
      AbortSignal.prototype.throwIfAborted.call(this);
    },
  },
});

/**
 * Makes `signal` (one the run created itself) check the lease's deadline with `check` whenever
 * its `aborted` is read or `throwIfAborted()` is called. Returns a function that ends this.
 */
export function checkDeadlineOnRead(signal: AbortSignal, check: () => void): () => void {
  if (!abortedGetter) return () => undefined;
  checks.set(signal, check);
  Object.setPrototypeOf(signal, deadlineCheckedPrototype);
  return () => {
    checks.delete(signal);
  };
}
