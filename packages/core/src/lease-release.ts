import type { BackgroundErrorContext, BackgroundErrorHandler } from './background-errors.ts';
import type { AgentStore, LeaseToken } from './store.ts';

/**
 * The releases of one run's lease. Every failure reaches the caller or `onBackgroundError`:
 * `release` is waited for as far as the caller allows, and followed beyond that; `inBackground`
 * is for a release nobody waits for at all.
 */
export function leaseReleases(options: {
  store: AgentStore;
  sessionId: string;
  onBackgroundError: BackgroundErrorHandler;
}) {
  const { store, sessionId, onBackgroundError } = options;
  const report = (error: unknown, after: ReleaseContext['after']) =>
    onBackgroundError(error, { operation: 'releaseLease', sessionId, after });
  // (A store that throws instead of rejecting is handled the same way.)
  const send = (token: LeaseToken) =>
    new Promise<unknown>((resolve) => resolve(store.releaseLease(sessionId, token)));
  return {
    report,
    inBackground(token: LeaseToken, after: 'abandoned-acquire' | 'abandoned-append'): void {
      send(token).then(undefined, (error: unknown) => report(error, after));
    },
    /**
     * Releases `token`, waiting through `wait` (which gives up when the caller aborts or the
     * lease's safe window passes). Resolves with the failure the caller should hear of: the
     * store's error, or why the wait ended; null when the release answered, or when the caller's
     * abort cut the wait short. A release not waited for to its answer is followed, and should
     * it fail later, reported.
     */
    async release(
      token: LeaseToken,
      wait: (answer: Promise<{ error: unknown } | null>) => Promise<{ error: unknown } | null>,
      caller: AbortSignal,
    ): Promise<{ error: unknown } | null> {
      const call = send(token);
      try {
        return await wait(
          call.then(
            () => null,
            (error: unknown) => ({ error }),
          ),
        );
      } catch (why) {
        call.then(undefined, (error: unknown) => report(error, 'unanswered-release'));
        return caller.aborted && why === caller.reason ? null : { error: why };
      }
    },
  };
}

type ReleaseContext = Extract<BackgroundErrorContext, { operation: 'releaseLease' }>;

/**
 * Puts a failed release on the run's own error as `leaseReleaseError`; false when the error
 * cannot carry it (not an extensible object, or one that refuses the property).
 */
export function attachReleaseError(error: unknown, releaseError: unknown): boolean {
  if (typeof error !== 'object' || error === null || !Object.isExtensible(error)) return false;
  try {
    Object.defineProperty(error, 'leaseReleaseError', {
      value: releaseError,
      writable: true,
      enumerable: true,
      configurable: true,
    });
    return true;
  } catch {
    // A Proxy or an exotic object that refuses it: the caller reports the failure elsewhere.
    return false;
  }
}
