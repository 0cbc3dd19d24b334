/**
 * What a store call whose failure no caller can be told of was doing. After the caller aborts,
 * run() still frees the lease once an abandoned acquire is granted or an abandoned append settles
 * (released earlier, the lease would fence an append that may yet land), and it stops waiting for
 * a release that has not answered; a run may also fail with a value that must not or cannot carry
 * `leaseReleaseError`. Such failures go to `onBackgroundError` rather than nowhere.
 */
export type BackgroundErrorContext =
  | {
      operation: 'releaseLease';
      sessionId: string;
      /**
       * Why nobody hears of it: the lease was granted to an acquire the caller had abandoned;
       * an append the caller abandoned settled first; run() stopped waiting for the release
       * (the caller aborted, or the lease's safe window passed); or the run failed with an
       * error not of agentstore's making (left unchanged: the caller's abort reason or a model
       * client's error may be shared by several runs), a value that cannot carry
       * `leaseReleaseError`, or the release's own error.
       */
      after: 'abandoned-acquire' | 'abandoned-append' | 'unanswered-release' | 'failed-run';
    }
  | {
      /**
       * An append of tool results the run went on sending after run() had settled (the caller
       * aborted while it was unanswered, or before every handler's result was sent) failed: the
       * next run records those calls as orphaned (a reconcile, a retry or a durability error).
       */
      operation: 'append';
      sessionId: string;
      after: 'abandoned-run';
    }
  | {
      /** An acquire the caller abandoned failed without a definite answer: it may have been granted. */
      operation: 'acquireLease';
      sessionId: string;
      after: 'abandoned-acquire';
    };

export type BackgroundErrorHandler = (error: unknown, context: BackgroundErrorContext) => void;

type ReleaseContext = Extract<BackgroundErrorContext, { operation: 'releaseLease' }>;

const WHAT_FAILED: Record<ReleaseContext['after'], string> = {
  'abandoned-acquire': 'releasing a lease granted to an acquire the caller had abandoned',
  'abandoned-append': 'releasing the lease once an append the caller abandoned had settled',
  'unanswered-release': 'a lease release run() had stopped waiting for',
  'failed-run': 'releasing the lease after the run failed',
};

/** The default: one warning naming the session and what it means for it. */
export const warnBackgroundError: BackgroundErrorHandler = (error, context) => {
  const session = JSON.stringify(context.sessionId);
  const text =
    context.operation === 'acquireLease'
      ? `agentstore: an acquire of session ${session} the caller abandoned failed without a definite answer; if the store granted it, the session stays busy until the lease expires.`
      : context.operation === 'append'
        ? `agentstore: an append of finished tool results (session ${session}), still sent after the caller aborted the run, did not succeed; the next run settles those calls (a re-read tells whether it landed after all).`
        : `agentstore: ${WHAT_FAILED[context.after]} (session ${session}) failed; the session stays busy until the lease expires.`;
  console.warn(text, error);
};
