import { foldSession } from '../inspect/session-fold.ts';
import type { Usage } from '../llm.ts';
import type { MessageRecord, NewMessage, ToolCall } from '../records.ts';
import type { StoreLimits } from '../store/contract.ts';
import { type ApprovalDecision, checkDecisions, decisionMessages } from './approvals.ts';
import { commitAll, fitsOneAppend, type MessageLedger, planAppends } from './message-ledger.ts';
import type { ModelStep } from './model-step.ts';
import type { ModelView } from './model-view.ts';
import { resultCommitter } from './result-committer.ts';
import { answerToolCall, type CallScope, type PreparedCall, runPreparedCall } from './tool-results.ts';

export interface Conversation {
  ledger: MessageLedger;
  /** Every message of the session as stored, in seq order. */
  messages: MessageRecord[];
  /** What the model is sent, kept incrementally: a step's cost does not grow with the session. */
  view: ModelView;
  scope: CallScope;
  usage: Usage;
  /**
   * How run() waits on its own writes: a durable run stops waiting one event-loop turn after the
   * caller aborts (the write itself goes on: see `trailingWrite`); a stateless run just waits.
   */
  callerBound: <T>(work: Promise<T>) => Promise<T>;
  /**
   * Write #2 of the latest step, whole: settles once every result of the step has landed or
   * failed, whoever still waits for it. The end of the run follows it when the caller stopped
   * waiting first: results of handlers that finished are sent even then.
   */
  trailingWrite: TrailingWrite | null;
}

export interface TrailingWrite {
  done: Promise<void>;
  /** Set once `done` has settled. */
  settled: boolean;
}

/**
 * Write #2 of a step, in flight. The last result of the step waits until `land()` is called (just
 * after the next model request was sent, so that even a synchronous driver's commit overlaps the
 * model's latency); `land()` resolves once every result has landed (they are then in `messages`),
 * or rejects with the first failed append. Every path out of the loop calls it. (An object: an
 * async function would adopt a bare promise.)
 */
export interface ResultsInFlight {
  land(): Promise<void>;
}

export const newMessage = (id: string, fields: Omit<NewMessage, 'id' | 'createdAt'>): NewMessage => ({
  id,
  ...fields,
  createdAt: new Date().toISOString(),
});

/**
 * Write #1: the user's message, the assistant's calls and the approval requests, in one append
 * when the limits allow. Split, the requests go before the assistant message: a crash between
 * appends then leaves either requests for calls nobody made (inert) or calls whose approval is
 * already recorded, never a call needing approval without its request. The results of calls that
 * cannot run go with the assistant message, so such a call is never open. Not `planAppends` over
 * the messages in order: that would store the assistant message before its requests when split;
 * and ordered requests-first, it would change the stored order of the common, unsplit write.
 */
export function firstWrite(
  userMessages: NewMessage[],
  step: ModelStep,
  requests: NewMessage[],
  limits: StoreLimits,
): NewMessage[][] {
  const { assistant, inputErrors } = step;
  const all = [...userMessages, assistant, ...requests, ...inputErrors];
  if (fitsOneAppend(all, limits)) return [all];
  return [
    ...planAppends(
      [...userMessages, ...requests].map((m) => [m]),
      limits,
    ),
    [assistant, ...inputErrors],
  ];
}

/** A provider's token figure, or 0 when it is not one: NaN would make the session state unstorable. */
export const tokenCount = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;

/** Keeps the error the caller must act on and attaches the one raised alongside it, so neither is lost. */
function withConcurrentError(primary: unknown, concurrent: unknown, callerReason: unknown): unknown {
  if (
    primary !== concurrent &&
    // The caller's own abort reason is not ours to change: several runs may share it.
    !Object.is(primary, callerReason) &&
    typeof primary === 'object' &&
    primary !== null &&
    Object.isExtensible(primary)
  ) {
    Object.assign(primary, { concurrentError: concurrent });
  }
  return primary;
}

/**
 * Waits for `write` to land, then throws `error` — or, when the write failed, the write's error
 * (the graver fact: what is stored is not what the run believes) with `error` attached.
 */
export async function throwOnceLanded(
  write: Promise<void>,
  error: unknown,
  signal: AbortSignal,
): Promise<never> {
  const writeError = await write.then(
    () => null,
    (failure: unknown) => failure,
  );
  throw writeError === null ? error : withConcurrentError(writeError, error, signal.reason);
}

/**
 * Commits appends one after another (write #1, decisions, the final answer, split as the store's
 * limits require) and records them in the session and in the model's view.
 */
export async function commitNow(
  conversation: Conversation,
  appends: NewMessage[][],
  options?: { releaseLease?: boolean },
): Promise<void> {
  conversation.messages.push(
    ...(await conversation.callerBound(commitAll(conversation.ledger, appends, options))),
  );
  conversation.view.add(appends.flat());
}

/**
 * Runs the calls in parallel; each result commits as soon as its handler settles. Resolves once
 * every handler has settled — the results are then in the model's view — with write #2 still in
 * flight, so the next model request can be sent while it lands. `prepared` (fresh calls only)
 * holds each call readied while write #1 was in flight, in the order of `calls`.
 */
export async function runCallsAndCommit(
  conversation: Conversation,
  calls: ToolCall[],
  resumed: boolean,
  prepared?: Promise<PreparedCall>[],
): Promise<ResultsInFlight> {
  const commitSoon = resultCommitter(conversation.ledger);
  // In commitSoon order, which is the order the results are stored in.
  const commits: Promise<MessageRecord[]>[] = [];
  // Handlers still running: the last one to settle holds its result for the next model request.
  let unsettled = calls.length;
  // Lets the step's last result go (called once the next model request is sent, or on the way out).
  let sendLastResult!: () => void;
  const lastResultMayGo = new Promise<void>((resolve) => {
    sendLastResult = resolve;
  });
  const handlers = await Promise.allSettled(
    calls.map(async (call, i) => {
      let result: NewMessage;
      try {
        const ready = prepared?.[i];
        result = ready
          ? await runPreparedCall(conversation.scope, call, await ready)
          : await answerToolCall(conversation.scope, call, resumed);
      } finally {
        unsettled -= 1;
      }
      conversation.view.add([result]);
      // Every result commits as soon as it settles, except the step's last, which waits for the
      // next model request to be sent (microseconds): then it is never alone on the critical path.
      const commit = unsettled === 0 ? lastResultMayGo.then(() => commitSoon(result)) : commitSoon(result);
      // Observed below once every handler settled; a commit may fail before that (an earlier
      // append of the step failed), which must not count as an unhandled rejection meanwhile.
      commit.catch(() => undefined);
      commits.push(commit);
    }),
  );
  const written = Promise.allSettled(commits).then((outcomes) => {
    // Already in seq order, each record once: `commits` is in commitSoon order (the last result
    // is pushed last and only then handed to commitSoon), resultCommitter appends its FIFO queue
    // in order through one sequential ledger, whose seqs only grow, and each commit resolves
    // with its own message's record. Skipping the failed ones keeps that order.
    for (const outcome of outcomes) {
      if (outcome.status === 'fulfilled') conversation.messages.push(...outcome.value);
    }
    const failed = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  });
  written.catch(() => undefined);
  const trailing: TrailingWrite = { done: written, settled: false };
  const mark = () => {
    trailing.settled = true;
  };
  written.then(mark, mark);
  conversation.trailingWrite = trailing;
  const handlerFailed = handlers.find((outcome) => outcome.status === 'rejected');
  if (handlerFailed) {
    sendLastResult();
    // Nothing returns before what settled is committed (or the caller stops waiting).
    return throwOnceLanded(
      conversation.callerBound(written),
      handlerFailed.reason,
      conversation.scope.signal,
    );
  }
  return {
    land() {
      sendLastResult();
      return conversation.callerBound(written);
    },
  };
}

/**
 * Settles what the stored session left open: human decisions first, then orphaned
 * calls (a crash cut them short). Returns the last write #2 still in flight, if any.
 */
export async function resolveOpenCalls(
  conversation: Conversation,
  decisions: Record<string, ApprovalDecision>,
): Promise<ResultsInFlight | null> {
  const { scope, messages } = conversation;
  const folded = foldSession(messages);
  const fresh = scope.sessionId !== null ? checkDecisions(scope.sessionId, folded, decisions) : {};
  let inFlight: ResultsInFlight | null = null;
  if (folded.awaitingApproval.length) {
    // A rejection and its result are one unit: split apart, a crash could leave a rejected call
    // looking merely orphaned, and a safeToRetry tool would then run.
    const units = decisionMessages(scope, folded.awaitingApproval, fresh);
    await commitNow(conversation, planAppends(units, conversation.ledger.limits));
    const approved = folded.awaitingApproval.filter((call) => fresh[call.id]?.approve === true);
    if (approved.length) inFlight = await runCallsAndCommit(conversation, approved, false);
  }
  if (folded.interruptedCalls.length) {
    // Appends are strictly sequential: the approved results land before the next batch commits.
    if (inFlight) await inFlight.land();
    inFlight = await runCallsAndCommit(conversation, folded.interruptedCalls, true);
  }
  return inFlight;
}
