import type { AgentStore, LeaseToken } from '../store/contract.ts';
import type { BackgroundErrorContext, BackgroundErrorHandler } from './background-errors.ts';

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
     * lease's safe window passes). Resolves with the store's failure when it answered with one;
     * null when it answered otherwise, or when the wait ended first: that release is followed,
     * and should it fail later, reported (the wait's own end is no failure of the release).
     */
    async release(
      token: LeaseToken,
      wait: (answer: Promise<{ error: unknown } | null>) => Promise<{ error: unknown } | null>,
    ): Promise<{ error: unknown } | null> {
      const call = send(token);
      try {
        return await wait(
          call.then(
            () => null,
            (error: unknown) => ({ error }),
          ),
        );
      } catch {
        // Not waited for to its answer: that answer is followed instead.
        call.then(undefined, (error: unknown) => report(error, 'unanswered-release'));
        return null;
      }
    },
  };
}

type ReleaseContext = Extract<BackgroundErrorContext, { operation: 'releaseLease' }>;

/**
 * Puts a failed release on the run's own error as `leaseReleaseError`; false when the error
 * cannot carry it: not an extensible object, or one (a Proxy) that refuses or drops the property.
 */
export function attachReleaseError(error: unknown, releaseError: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  try {
    if (!Object.isExtensible(error)) return false;
    Object.defineProperty(error, 'leaseReleaseError', {
      value: releaseError,
      writable: true,
      enumerable: true,
      configurable: true,
    });
    return Object.is((error as { leaseReleaseError?: unknown }).leaseReleaseError, releaseError);
  } catch {
    // Refused by a trap or a non-configurable property: the caller reports the failure elsewhere.
    return false;
  }
}
