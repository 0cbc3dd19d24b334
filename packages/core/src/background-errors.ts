/**
 * What a store call nobody awaits any more was doing when it failed. After the caller aborts,
 * run() still frees the lease once an abandoned acquire is granted or an abandoned append settles
 * (released earlier, the lease would fence an append that may yet land); the caller is gone by
 * then, so a failure of that release is handed to `onBackgroundError` rather than returned.
 */
export interface BackgroundErrorContext {
  operation: 'releaseLease';
  sessionId: string;
  /** What the caller abandoned: an acquire granted after all, or an append left unanswered. */
  after: 'abandoned-acquire' | 'abandoned-append';
}

export type BackgroundErrorHandler = (error: unknown, context: BackgroundErrorContext) => void;

/** The default: one warning naming the session; its lease lapses after its TTL instead. */
export const warnBackgroundError: BackgroundErrorHandler = (error, context) => {
  const abandoned = context.after === 'abandoned-acquire' ? 'an acquire' : 'an append';
  console.warn(
    `agentstore: releasing the lease of session ${JSON.stringify(context.sessionId)} after ${abandoned} the caller abandoned failed; the session stays busy until the lease expires.`,
    error,
  );
};
