import type { AgentDefinition } from '../agent.ts';
import {
  InvalidArgumentError,
  isAgentStoreError,
  LeaseLostError,
  MemoryStoreNotDurableError,
  StoreConfigurationError,
} from '../errors.ts';
import { foldSession } from '../inspect/session-fold.ts';
import type { LlmAdapter, LlmResponse, LlmToolSpec, Usage } from '../llm.ts';
import type { JsonValue, MessageRecord, NewMessage, ToolCall } from '../records.ts';
import type { AgentStore, LeaseToken, SessionInit, StoreLimits } from '../store/contract.ts';
import type { AnyTool } from '../tool.ts';
import { abortableSleep } from './abortable-sleep.ts';
import {
  type ApprovalDecision,
  approvalRequestMessages,
  checkDecisions,
  decisionMessages,
  type PendingApproval,
  toPendingApproval,
} from './approvals.ts';
import { type BackgroundErrorHandler, warnBackgroundError } from './background-errors.ts';
import { keepLeaseAlive } from './lease-keeper.ts';
import { attachReleaseError, leaseReleases } from './lease-release.ts';
import { type ModelStep, modelStep } from './model-step.ts';
import { type ModelView, modelView } from './model-view.ts';
import { onNextTurn } from './next-turn.ts';
import { checkRunOptions } from './run-options.ts';
import {
  commitAll,
  durableLedger,
  fitsOneAppend,
  type MessageLedger,
  maxResultBytes,
  planAppends,
  resultCommitter,
  statelessLedger,
} from './session-writer.ts';
import { storeWaits } from './store-waits.ts';
import { toolCallIds } from './tool-call-ids.ts';
import {
  type CallScope,
  needsApproval,
  type PreparedCall,
  prepareFreshCall,
  runPreparedCall,
  settleToolCall,
} from './tool-results.ts';

export interface RunOptions {
  /** A durable store plus a `sessionId` turns on durable mode. */
  store?: AgentStore;
  sessionId?: string;
  /** The user's message; optional when resuming a session. */
  message?: string;
  /**
   * A stable id for `message` (e.g. the id of the HTTP request or queue delivery). When the
   * session already holds a message with this id, it is not appended again and the run resumes:
   * retrying a run whose process died is then safe whether or not the message had landed.
   */
  messageId?: string;
  llm: LlmAdapter;
  /** Added to (and overriding by name) the agent's tools. */
  tools?: Record<string, AnyTool>;
  ownerId?: string | null;
  tenantId?: string | null;
  /**
   * Cancels the run: nothing new starts and handlers see `ctx.signal` abort; results of handlers
   * that finished are still sent. run() rejects with the abort reason without waiting for a
   * store call still unanswered one event-loop turn after the abort (a half-open connection):
   * the next run settles such an append by re-reading. The lease is released once that call
   * settles, or lapses after its TTL if it never does.
   */
  signal?: AbortSignal;
  /**
   * Lease time-to-live, 10 ms to 24 h; renewed every quarter of it while the run works. The run
   * stops starting work (and aborts `ctx.signal`) a fifth of it before the store would let another
   * worker take over, counted from the send of the last renewal that answered. Default 30 s.
   */
  leaseTtlMs?: number;
  /**
   * How long to wait for a busy session's lease (e.g. one a crashed process left behind) before
   * throwing `SessionBusyError`. Polls every 25–250 ms (backoff with jitter), so a released lease
   * is taken promptly. Default 0: throw at once.
   */
  leaseWaitMs?: number;
  /** Decisions for calls the session waits on (`status: 'awaiting-approval'`), by tool-call id. */
  approvals?: Record<string, ApprovalDecision>;
  /**
   * Where a lease-call failure goes when no caller can be told of it: the release after an
   * acquire or append the caller abandoned; a release run() stopped waiting for (the caller
   * aborted, or the lease's safe window passed); a release that failed after the run failed with
   * an error not of agentstore's making (left unchanged: the caller's abort reason or a model
   * client's error may be shared by several runs), a value that cannot carry `leaseReleaseError`
   * or the release's own error; an abandoned acquire that failed without a definite answer. Each
   * means the session may stay busy until the lease expires. Default: `console.warn`. Called in
   * a promise job of its own; it must not throw: a throw becomes an unhandled rejection.
   */
  onBackgroundError?: BackgroundErrorHandler;
}

export interface RunResult {
  status: 'complete' | 'max-iterations' | 'awaiting-approval';
  /** The final assistant text. */
  response: string;
  sessionId: string | null;
  headSeq: number;
  /** Every message of the session, as stored. */
  messages: MessageRecord[];
  /** Tokens used by this run's model calls. */
  usage: Usage;
  /** The calls waiting for a human when `status` is `awaiting-approval`; otherwise empty. */
  pendingApprovals: PendingApproval[];
  /** Set when everything committed but releasing the lease failed (it then expires after its TTL). */
  leaseReleaseError?: unknown;
}

const DEFAULT_LEASE_TTL_MS = 30_000;

interface Conversation {
  ledger: MessageLedger;
  /** Every message of the session as stored, in seq order. */
  messages: MessageRecord[];
  /** What the model is sent, kept incrementally: a step's cost does not grow with the session. */
  view: ModelView;
  scope: CallScope;
  usage: Usage;
}

/**
 * Write #2 of a step, in flight. The last result of the step waits until `land()` is called (just
 * after the next model request was sent, so that even a synchronous driver's commit overlaps the
 * model's latency); `land()` resolves once every result has landed (they are then in `messages`),
 * or rejects with the first failed append. Every path out of the loop calls it. (An object: an
 * async function would adopt a bare promise.)
 */
interface PendingWrite {
  land(): Promise<void>;
}

const newMessage = (id: string, fields: Omit<NewMessage, 'id' | 'createdAt'>): NewMessage => ({
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
function firstWrite(
  pending: NewMessage[],
  step: ModelStep,
  requests: NewMessage[],
  limits: StoreLimits,
): NewMessage[][] {
  const { assistant, inputErrors } = step;
  const all = [...pending, assistant, ...requests, ...inputErrors];
  if (fitsOneAppend(all, limits)) return [all];
  return [
    ...planAppends(
      [...pending, ...requests].map((m) => [m]),
      limits,
    ),
    [assistant, ...inputErrors],
  ];
}

/** A provider's token figure, or 0 when it is not one: NaN would make the session state unstorable. */
const tokenCount = (value: unknown): number =>
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
async function throwOnceLanded(write: Promise<void>, error: unknown, signal: AbortSignal): Promise<never> {
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
async function commitNow(
  conversation: Conversation,
  appends: NewMessage[][],
  options?: { releaseLease?: boolean },
): Promise<void> {
  conversation.messages.push(...(await commitAll(conversation.ledger, appends, options)));
  conversation.view.add(appends.flat());
}

/**
 * Runs the calls in parallel; each result commits as soon as its handler settles. Resolves once
 * every handler has settled — the results are then in the model's view — with write #2 still in
 * flight, so the next model request can be sent while it lands. `prepared` (fresh calls only)
 * holds each call readied while write #1 was in flight, in the order of `calls`.
 */
async function settleAndCommit(
  conversation: Conversation,
  calls: ToolCall[],
  resumed: boolean,
  prepared?: Promise<PreparedCall>[],
): Promise<PendingWrite> {
  const commitSoon = resultCommitter(conversation.ledger);
  // In commitSoon order, which is the order the results are stored in.
  const commits: Promise<MessageRecord[]>[] = [];
  let unsettled = calls.length;
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const handlers = await Promise.allSettled(
    calls.map(async (call, i) => {
      let result: NewMessage;
      try {
        const ready = prepared?.[i];
        result = ready
          ? await runPreparedCall(conversation.scope, call, await ready)
          : await settleToolCall(conversation.scope, call, resumed);
      } finally {
        unsettled -= 1;
      }
      conversation.view.add([result]);
      // Every result commits as soon as it settles, except the step's last, which waits for the
      // next model request to be sent (microseconds): then it is never alone on the critical path.
      const commit = unsettled === 0 ? released.then(() => commitSoon(result)) : commitSoon(result);
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
  const handlerFailed = handlers.find((outcome) => outcome.status === 'rejected');
  if (handlerFailed) {
    release();
    // Nothing returns before what settled is committed.
    return throwOnceLanded(written, handlerFailed.reason, conversation.scope.signal);
  }
  return {
    land() {
      release();
      return written;
    },
  };
}

/**
 * Settles what the stored session left open: human decisions first, then crash-interrupted
 * calls. Returns the last write #2 still in flight, if any.
 */
async function settleOpenCalls(
  conversation: Conversation,
  decisions: Record<string, ApprovalDecision>,
): Promise<PendingWrite | null> {
  const { scope, messages } = conversation;
  const folded = foldSession(messages);
  const fresh = scope.sessionId !== null ? checkDecisions(scope.sessionId, folded, decisions) : {};
  let pending: PendingWrite | null = null;
  if (folded.awaitingApproval.length) {
    // A rejection and its result are one unit: split apart, a crash could leave a rejected call
    // looking merely interrupted, and a safeToRetry tool would then run.
    const units = decisionMessages(scope, folded.awaitingApproval, fresh);
    await commitNow(conversation, planAppends(units, conversation.ledger.limits));
    const approved = folded.awaitingApproval.filter((call) => fresh[call.id]?.approve === true);
    if (approved.length) pending = await settleAndCommit(conversation, approved, false);
  }
  if (folded.interruptedCalls.length) {
    // Appends are strictly sequential: the approved results land before the next batch commits.
    if (pending) await pending.land();
    pending = await settleAndCommit(conversation, folded.interruptedCalls, true);
  }
  return pending;
}

async function loop(
  agent: AgentDefinition,
  options: RunOptions,
  conversation: Conversation,
  signal: AbortSignal,
): Promise<RunResult> {
  const { messages, scope, usage, view } = conversation;
  const tools: LlmToolSpec[] = Object.entries(scope.tools).map(([name, t]) => ({
    name,
    description: t.description,
    input: t.input,
  }));
  const result = (
    status: RunResult['status'],
    response: string,
    pendingApprovals: ToolCall[] = [],
  ): RunResult => ({
    status,
    response,
    sessionId: scope.sessionId,
    headSeq: conversation.ledger.headSeq,
    messages,
    usage,
    pendingApprovals: pendingApprovals.map(toPendingApproval),
  });

  // At most one write #2 is in flight; it must land before the next append starts and before
  // the run returns or throws.
  let pending: PendingWrite | null = null;
  const landed = async () => {
    const write = pending;
    pending = null;
    if (write) await write.land();
  };

  // Every request's signal: the run's, and aborted as well by a write #2 that fails (which ends
  // the run). One per run, linked to the run's signal once and unlinked when the loop ends:
  // linking a controller per request cost ~1 µs on every step's path (AbortSignal.any ~8 µs).
  const requestAbort = new AbortController();
  const followRun = () => requestAbort.abort(signal.reason);
  if (signal.aborted) requestAbort.abort(signal.reason);
  else signal.addEventListener('abort', followRun, { once: true });

  /**
   * One model call, overlapping write #2 of the previous step when one is in flight: a failed
   * write aborts the request, and the call returns only once the write has landed.
   */
  const callModel = async (extra: NewMessage[]) => {
    const request = { system: agent.instructions, messages: view.request(extra), tools };
    const write = pending;
    pending = null;
    if (!write) return options.llm.generate({ ...request, signal: requestAbort.signal });
    // The request goes out first; then the step's last result starts committing.
    let sent: Promise<LlmResponse>;
    try {
      sent = options.llm.generate({ ...request, signal: requestAbort.signal });
    } catch (error) {
      sent = Promise.reject(error);
    }
    const landing = write.land();
    const writeOutcome = landing.then(
      () => ({ failed: false as const }),
      (error: unknown) => {
        requestAbort.abort(error);
        return { failed: true as const, error };
      },
    );
    const answer = Promise.resolve(sent).then(
      (response) => ({ failed: false as const, response }),
      (error: unknown) => ({ failed: true as const, error }),
    );
    const writeFirst = await Promise.race([answer.then(() => false), writeOutcome.then((w) => w.failed)]);
    const written = await writeOutcome;
    // The write failed before the model answered: the request is aborted, its answer moot.
    if (writeFirst && written.failed) throw written.error;
    const settled = await answer;
    // The model's error is usually just our abort (then the same error); anything else is
    // attached to the write's, not dropped.
    if (settled.failed) return throwOnceLanded(landing, settled.error, signal);
    if (written.failed) throw written.error;
    return settled.response;
  };

  try {
    pending = await settleOpenCalls(conversation, options.approvals ?? {});

    let pendingUser: NewMessage | null = null;
    const alreadyStored = options.messageId !== undefined && messages.some((m) => m.id === options.messageId);
    if (options.message !== undefined && !alreadyStored) {
      pendingUser = newMessage(options.messageId ?? scope.newId(), {
        role: 'user',
        content: options.message,
      });
    } else if (pending === null) {
      // (With results just settled, the session cannot be complete: straight to the model.)
      const folded = foldSession(messages);
      if (folded.status === 'complete') return result('complete', folded.response ?? '');
      if (messages.length === 0) {
        throw new InvalidArgumentError({ argument: 'message', reason: 'is required to start a new session' });
      }
    }

    const ids = toolCallIds(messages);
    for (let iteration = 0; iteration < agent.maxIterations; iteration++) {
      signal.throwIfAborted();
      const first = pendingUser ? [pendingUser] : [];
      const response = await callModel(first);
      // Counted before the reply is checked: a reply that cannot be stored was still paid for.
      const paid = (response as Partial<LlmResponse> | null)?.usage;
      usage.inputTokens += tokenCount(paid?.inputTokens);
      usage.outputTokens += tokenCount(paid?.outputTokens);
      let step: ModelStep;
      try {
        step = modelStep(response, {
          scope,
          ids,
          limits: conversation.ledger.limits,
          assistantId: scope.newId(),
          usage,
        });
      } catch (error) {
        // Keep the user's message: the session then resumes by asking the model again.
        if (first.length) await commitNow(conversation, [first]);
        throw error;
      }
      const { assistant, calls } = step;
      pendingUser = null;
      // callModel has landed write #2 of the previous step: nothing is in flight from here on.
      if (!assistant.toolCalls) {
        const appends = planAppends(
          [...first, assistant].map((m) => [m]),
          conversation.ledger.limits,
        );
        await commitNow(conversation, appends, { releaseLease: true });
        return result('complete', assistant.content);
      }
      const waiting: ToolCall[] = [];
      for (const call of calls) if (await needsApproval(scope, call)) waiting.push(call);
      if (waiting.length && scope.sessionId === null) {
        throw new InvalidArgumentError({
          argument: 'sessionId',
          reason: `tool ${waiting[0]!.name} needs approval, which only a durable session (store + sessionId) can wait for`,
        });
      }
      const requests = waiting.length ? approvalRequestMessages(scope, waiting) : [];
      const runNow = calls.filter((call) => !waiting.includes(call));
      const writing = commitNow(conversation, firstWrite(first, step, requests, conversation.ledger.limits)); // write #1
      // Readied (input validated, context built) while write #1 is in flight, from the next turn
      // (or once it is done, for a store that answers at once): started before it, their copy,
      // schema and key hash ran ahead of the append's send (pg's pool sends only once the
      // microtasks are done; measured here, 30–45 µs later). No handler runs before write #1
      // lands. Observed by settleAndCommit, or moot if write #1 fails.
      const prepared = runNow.map((call) => onNextTurn(() => prepareFreshCall(scope, call), writing));
      for (const ready of prepared) ready.catch(() => undefined);
      await writing;
      if (runNow.length) pending = await settleAndCommit(conversation, runNow, false, prepared); // write #2, in flight
      if (waiting.length) {
        await landed();
        return result('awaiting-approval', assistant.content, waiting);
      }
    }
    await landed();
    return result('max-iterations', '');
  } catch (error) {
    const write = pending;
    pending = null;
    if (!write) throw error;
    return throwOnceLanded(write.land(), error, signal);
  } finally {
    signal.removeEventListener('abort', followRun);
  }
}

/** A busy session is polled from this interval, doubling up to the cap, each with ±25% jitter. */
const WAIT_POLL_MIN_MS = 25;
const WAIT_POLL_MAX_MS = 250;
/** Extra attempts when `acquireLease`'s answer is lost (a dropped connection, a timeout). */
const AMBIGUOUS_ACQUIRE_RETRIES = 2;

/**
 * Acquires the lease, waiting out a busy holder for at most `waitMs`. A waiter polls (bounded,
 * jittered backoff, at most ~4 calls a second) instead of sleeping until the expiry it was told,
 * so a released lease is taken within a poll interval, not at the old expiry. An acquire whose
 * outcome is unknown is repeated with the same holder: the store re-grants a holder its own
 * lease, so a lost answer cannot leave the session blocked for a whole TTL.
 */
async function acquireWithin<T>(acquire: () => Promise<T>, waitMs: number, signal: AbortSignal): Promise<T> {
  const deadline = performance.now() + waitMs;
  let poll = WAIT_POLL_MIN_MS;
  let ambiguous = 0;
  for (;;) {
    signal.throwIfAborted();
    try {
      return await untilAborted(acquire(), signal);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (isAgentStoreError(error, 'SESSION_BUSY')) {
        const left = deadline - performance.now();
        if (left <= 0) throw error;
        const jittered = Math.round(poll * (0.75 + Math.random() * 0.5));
        await abortableSleep(Math.max(1, Math.min(error.retryAfterMs, jittered, left)), signal);
        poll = Math.min(WAIT_POLL_MAX_MS, poll * 2);
        continue;
      }
      // A typed refusal is definite; anything else may have been granted before the answer was lost.
      if (isAgentStoreError(error) || ambiguous >= AMBIGUOUS_ACQUIRE_RETRIES) throw error;
      ambiguous += 1;
      await abortableSleep(WAIT_POLL_MIN_MS * ambiguous, signal);
    }
  }
}

/**
 * Whether `error` says this run's own lease is lost: a LeaseLostError about this session and
 * holder (or one that names no holder). Another run's, handed over by user code or as the
 * caller's abort reason, is not: this run still releases its own lease.
 */
function isOurLeaseLost(error: unknown, sessionId: string, holder: string): boolean {
  if (!isAgentStoreError(error, 'LEASE_LOST')) return false;
  const lost = error as { sessionId?: unknown; holder?: unknown };
  return lost.sessionId === sessionId && (lost.holder === holder || lost.holder === null);
}

/**
 * Whether an acquire that failed may still have been granted: anything but a typed refusal. An
 * unexpected reply or an undecodable session can come after the grant was written.
 */
function mayHaveBeenGranted(failure: unknown): boolean {
  return (
    !isAgentStoreError(failure) ||
    isAgentStoreError(failure, 'UNEXPECTED_REPLY') ||
    isAgentStoreError(failure, 'CORRUPT_RECORD')
  );
}

/**
 * Settles with `signal.reason` once `signal` aborts, whether or not `work` ever answers: a store
 * call on a half-open connection (a partition: no error, no answer) must not keep a run that
 * lost its lease, or whose caller gave up, pending forever. `work` is left to finish on its own.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // The caller gets the abort reason; what `work` ends with is moot, not an unhandled rejection.
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Wraps handlers and `reconcile` so that none starts once the lease's local deadline has passed. */
function guardTools(tools: Record<string, AnyTool>, assertHeld: () => void): Record<string, AnyTool> {
  const guarded: Record<string, AnyTool> = {};
  for (const [name, t] of Object.entries(tools)) {
    const { handler, reconcile } = t;
    guarded[name] = {
      ...t,
      handler: (input, ctx) => {
        assertHeld();
        return handler(input, ctx);
      },
      ...(reconcile
        ? {
            reconcile: (input, ctx) => {
              assertHeld();
              return reconcile(input, ctx);
            },
          }
        : {}),
    };
  }
  return guarded;
}

/**
 * Runs an agent. With a durable store and a `sessionId`, every step is committed before and
 * after its tools run, under a single-writer lease, and a crashed run resumes where it stopped.
 * The next model request is sent while a step's results are still being committed; nothing else
 * is written, and the run does not return, before they have landed. When that commit fails, the
 * run throws its error, with a model error raised at the same moment as `concurrentError`.
 */
export async function run(agent: AgentDefinition, given: RunOptions): Promise<RunResult> {
  // Each option is read once, here: what checkRunOptions checks is what the run uses, even when
  // the caller's object has getters or is a Proxy.
  const options: RunOptions = typeof given === 'object' && given !== null ? { ...given } : given;
  const { store, sessionId } = options;
  checkRunOptions(options, agent.name);
  if (sessionId !== undefined && !store) {
    throw new InvalidArgumentError({
      argument: 'store',
      reason: 'is required with a sessionId (a durable run needs a store)',
    });
  }
  if (store && sessionId !== undefined && !store.durable) {
    const problem = store.durabilityProblem;
    if (problem) throw new StoreConfigurationError({ ...problem, problem: 'store-not-durable' });
    throw new MemoryStoreNotDurableError({ sessionId });
  }
  const outer = options.signal ?? new AbortController().signal;
  const tools = { ...agent.tools, ...options.tools };
  const ownerId = options.ownerId ?? null;
  const tenantId = options.tenantId ?? null;
  const newId = () => crypto.randomUUID();
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };

  if (!store || sessionId === undefined) {
    const scope: CallScope = {
      sessionId: null,
      ownerId,
      tenantId,
      signal: outer,
      tools,
      newId,
      maxResultBytes: store ? maxResultBytes(store.limits) : Number.POSITIVE_INFINITY,
    };
    return loop(
      agent,
      options,
      { ledger: statelessLedger(), messages: [], view: modelView(), scope, usage },
      outer,
    );
  }

  // Both were checked (bounds included) by checkRunOptions before anything else.
  const ttlMs = options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  const waitMs = options.leaseWaitMs ?? 0;
  const init: SessionInit = {
    agentName: agent.name,
    ownerId,
    tenantId,
    state: { usage: { inputTokens: 0, outputTokens: 0 } },
  };
  const holder = newId();
  const handler = options.onBackgroundError ?? warnBackgroundError;
  // Called from a promise job of its own: a handler that throws never replaces run()'s outcome.
  const onBackgroundError: BackgroundErrorHandler = (error, context) => {
    Promise.resolve().then(() => handler(error, context));
  };
  const releases = leaseReleases({ store, sessionId, onBackgroundError });
  // The lease is measured from the send of the acquire that granted it (monotonic clock).
  let sentAt = performance.now();
  let lastAcquire: Promise<{ epoch: number }> | null = null;
  const { epoch, session } = await acquireWithin(
    () => {
      sentAt = performance.now();
      const attempt = store.acquireLease(sessionId, { holder, ttlMs, init });
      lastAcquire = attempt;
      return attempt;
    },
    waitMs,
    outer,
  ).catch((error: unknown) => {
    // Abandoned while an acquire was unanswered (the caller aborted): should the store grant it
    // after all, free that lease rather than leave the session blocked for a whole TTL.
    if (outer.aborted && lastAcquire !== null) {
      lastAcquire.then(
        (late) => releases.inBackground({ holder, epoch: late.epoch }, 'abandoned-acquire'),
        (failure: unknown) => {
          // A typed refusal is definite (nothing was granted); anything else may have been.
          if (mayHaveBeenGranted(failure)) {
            onBackgroundError(failure, { operation: 'acquireLease', sessionId, after: 'abandoned-acquire' });
          }
        },
      );
    }
    throw error;
  });
  const lease: LeaseToken = { holder, epoch };
  const leaseLost = new AbortController();
  const signal = AbortSignal.any([outer, leaseLost.signal]);
  const keeper = keepLeaseAlive({
    store,
    sessionId,
    lease,
    ttlMs,
    sentAt,
    onLost: (error) => leaseLost.abort(error),
  });
  let finished = false;
  checkDeadlineOnRead(signal, () => {
    if (!finished) keeper.assertHeld();
  });
  let released = false;
  /**
   * Every wait on the store ends when the lease is lost or given up, or once the caller has
   * aborted (after one more event-loop turn: an answer already received is still taken). The
   * call itself goes on; what it did is settled by the next run's re-read.
   */
  const waits = storeWaits(outer, leaseLost.signal);
  const storeAnswer = waits.answer;
  // A load or release left unanswered for the lease's safe window: the holder gives the lease up.
  const unanswered = (what: string) => () =>
    new LeaseLostError(
      { sessionId, holder, epoch },
      { cause: new Error(`${what} did not answer within the lease's safe window; the lease was given up`) },
    );
  /** Releases the lease, waiting as long as the caller and the lease's safe window allow. */
  const release = () => {
    keeper.releasing();
    return releases.release(lease, (answer) => storeAnswer(keeper.watch(answer, unanswered('releaseLease'))));
  };
  /** The append in flight, while it has not settled (appends are strictly sequential). */
  let appending: Promise<unknown> | null = null;
  /** Settles once every append the ledger sent has answered (a commit may give up on one first). */
  let appendsSettled = (): Promise<void> => Promise.resolve();
  /** Whether an append may still land though its commit failed (see DurableLedger). */
  let outcomeUnconfirmed = () => false;
  /** Set when an append that carried the release has landed: the store freed the lease itself. */
  let freedByAppend = false;
  try {
    const loaded = await storeAnswer(keeper.watch(store.load(sessionId), unanswered('load')));
    const messages = loaded?.messages ?? [];
    const priorUsage = (session.state as { usage?: Usage } | null)?.usage;
    const totalUsage = (): JsonValue => ({
      usage: {
        inputTokens: (priorUsage?.inputTokens ?? 0) + usage.inputTokens,
        outputTokens: (priorUsage?.outputTokens ?? 0) + usage.outputTokens,
      },
    });
    const base = durableLedger({
      store,
      sessionId,
      lease,
      headSeq: loaded?.session.headSeq ?? 0,
      init,
      state: totalUsage,
      assertHeld: keeper.assertHeld,
      leaseLost: leaseLost.signal,
      watch: keeper.watch,
    });
    appendsSettled = base.appendsSettled;
    outcomeUnconfirmed = () => base.outcomeUnconfirmed;
    const ledger: MessageLedger = {
      get headSeq() {
        return base.headSeq;
      },
      limits: base.limits,
      async commit(batch, commitOptions) {
        // A cancelled run still sends what finished (its effects happened); a lost lease cannot.
        // Checked here too, so a commit after the deadline never starts (the ledger checks again
        // before every attempt; storeAnswer bounds an attempt that never answers).
        keeper.assertHeld();
        // The run's last append frees the lease itself: a renewal racing it is refused.
        if (commitOptions?.releaseLease) keeper.releasing();
        const sent = base.commit(batch, commitOptions);
        appending = sent;
        const settled = () => {
          if (appending === sent) appending = null;
        };
        sent.then(
          () => {
            settled();
            if (commitOptions?.releaseLease) freedByAppend = true;
          },
          (error: unknown) => {
            settled();
            // Refused as a lost lease: the whole run learns it now (sibling calls of the step
            // included), not at the next renewal.
            if (isOurLeaseLost(error, sessionId, holder)) keeper.lost(error as LeaseLostError);
          },
        );
        const records = await storeAnswer(sent);
        if (commitOptions?.releaseLease) released = true;
        return records;
      },
    };
    const scope: CallScope = {
      sessionId,
      incarnationId: session.incarnationId ?? null,
      ownerId,
      tenantId,
      signal,
      tools: guardTools(tools, keeper.assertHeld),
      newId,
      maxResultBytes: maxResultBytes(store.limits),
    };
    const outcome = await loop(
      agent,
      options,
      { ledger, messages, view: modelView(messages), scope, usage },
      signal,
    );
    if (!released) {
      released = true;
      // Everything is committed; a failed release only delays the next run until the lease
      // expires, so the run still succeeds and reports it. Cut short by the caller's abort, it
      // is followed instead: a later failure goes to onBackgroundError.
      const failed = await release();
      if (failed) return { ...outcome, leaseReleaseError: failed.error };
    }
    return outcome;
  } catch (error) {
    // A lease lost or given up (an unanswered append) is not released: it lapses in the store.
    // (The caller's abort reason may be any error, a LeaseLostError of another run's included.)
    const ourLeaseLost = leaseLost.signal.aborted || isOurLeaseLost(error, sessionId, holder);
    // Neither is one held under an append that may still land: a release would fence it.
    if (!released && !ourLeaseLost && !outcomeUnconfirmed()) {
      // (Assigned by the ledger's commit, which TypeScript's narrowing cannot see.)
      const abandoned = appending as Promise<unknown> | null;
      if (abandoned) {
        // The caller gave up while an append was unanswered. It may still land: released now,
        // the lease would fence it and drop a result whose effect happened. So the release
        // follows it, unawaited (nobody is waiting for this run any more), once the store has
        // answered every append sent (the commit may have stopped waiting for one first), and
        // only if none may still land; otherwise the lease lapses after its TTL, renewals
        // having stopped.
        const releaseLater = () =>
          appendsSettled().then(() => {
            if (!freedByAppend && !outcomeUnconfirmed()) releases.inBackground(lease, 'abandoned-append');
          });
        abandoned.then(releaseLater, releaseLater);
      } else {
        // The run's own error is what the caller needs; a failed release only delays the next
        // run until the lease expires, and is attached to that error for diagnosis. The caller's
        // own abort reason is not ours to change (several runs may share it), and some values
        // cannot carry it: then it goes to onBackgroundError, never nowhere.
        const failed = await release();
        // Only on an error of ours about this session, not carrying one already: any other (a
        // model client's memoised rejection, the caller's abort reason) may be shared by runs.
        const carried =
          failed !== null &&
          isAgentStoreError(error) &&
          (error as { sessionId?: unknown }).sessionId === sessionId &&
          !Object.hasOwn(error, 'leaseReleaseError') &&
          !Object.is(error, outer.reason) &&
          !Object.is(failed.error, error) &&
          attachReleaseError(error, failed.error);
        if (failed && !carried) releases.report(failed.error, 'failed-run');
      }
    }
    throw error;
  } finally {
    finished = true;
    keeper.stop();
    waits.stop();
  }
}

const abortedGetter = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')?.get;

/**
 * A handler resumed after a pause (SIGSTOP, a long GC, a blocked event loop) can read
 * `ctx.signal` before the keeper's abort timer had a chance to run: an I/O answer or an earlier
 * timer is processed first. Reading `aborted` / calling `throwIfAborted()` therefore checks the
 * local deadline synchronously, so the check right before an effect is never stale. The object
 * stays a real AbortSignal (fetch and friends still accept it).
 */
function checkDeadlineOnRead(signal: AbortSignal, check: () => void): void {
  if (!abortedGetter) return;
  const poll = () => {
    try {
      check();
    } catch {
      // the check aborted the signal (or it already was): the read below reports it
    }
  };
  Object.defineProperties(signal, {
    aborted: {
      configurable: true,
      get() {
        poll();
        return abortedGetter.call(signal);
      },
    },
    throwIfAborted: {
      configurable: true,
      value() {
        poll();
        AbortSignal.prototype.throwIfAborted.call(signal);
      },
    },
  });
}
