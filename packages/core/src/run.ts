import type { AgentDefinition } from './agent.ts';
import {
  type ApprovalDecision,
  approvalRequestMessages,
  checkDecisions,
  decisionMessages,
  type PendingApproval,
  toPendingApproval,
} from './approvals.ts';
import {
  InvalidArgumentError,
  isAgentStoreError,
  MemoryStoreNotDurableError,
  StoreConfigurationError,
} from './errors.ts';
import { keepLeaseAlive } from './lease-keeper.ts';
import type { LlmAdapter, LlmMessage, LlmToolSpec, Usage } from './llm.ts';
import type { JsonValue, MessageRecord, NewMessage, ToolCall } from './records.ts';
import { checkRunOptions } from './run-options.ts';
import { foldSession, INTERNAL_KINDS } from './session-fold.ts';
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
import type { AgentStore, LeaseToken, SessionInit, StoreLimits } from './store.ts';
import type { AnyTool } from './tool.ts';
import { assignToolCallIds } from './tool-call-ids.ts';
import { type CallScope, needsApproval, settleToolCall } from './tool-results.ts';

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
  signal?: AbortSignal;
  /** Lease time-to-live; renewed every third of it while the run works. Default 30 s. */
  leaseTtlMs?: number;
  /**
   * How long to wait for a busy session's lease (e.g. one a crashed process left behind) before
   * throwing `SessionBusyError`. Retries after each `retryAfterMs`. Default 0: throw at once.
   */
  leaseWaitMs?: number;
  /** Decisions for calls the session waits on (`status: 'awaiting-approval'`), by tool-call id. */
  approvals?: Record<string, ApprovalDecision>;
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
  messages: MessageRecord[];
  scope: CallScope;
  usage: Usage;
}

const toLlmMessage = ({
  role,
  content,
  toolCalls,
  toolCallId,
  toolName,
  kind,
}: MessageRecord): LlmMessage => ({
  role,
  content,
  ...(toolCalls ? { toolCalls } : {}),
  ...(toolCallId !== undefined ? { toolCallId } : {}),
  ...(toolName !== undefined ? { toolName } : {}),
  ...(kind !== undefined ? { kind } : {}),
});

const newMessage = (id: string, fields: Omit<NewMessage, 'id' | 'createdAt'>): NewMessage => ({
  id,
  ...fields,
  createdAt: new Date().toISOString(),
});

/**
 * Write #1: the user's message, the assistant's calls and the approval requests, in one append
 * when the limits allow. Split, the requests go before the assistant message: a crash between
 * appends then leaves either requests for calls nobody made (inert) or calls whose approval is
 * already recorded, never a call needing approval without its request.
 */
function firstWrite(
  pending: NewMessage[],
  assistant: NewMessage,
  requests: NewMessage[],
  limits: StoreLimits,
): NewMessage[][] {
  const all = [...pending, assistant, ...requests];
  if (fitsOneAppend(all, limits)) return [all];
  return [
    ...planAppends(
      [...pending, ...requests].map((m) => [m]),
      limits,
    ),
    [assistant],
  ];
}

/** Runs the calls in parallel; each result commits as soon as its handler settles. */
async function settleAndCommit(
  conversation: Conversation,
  calls: ToolCall[],
  resumed: boolean,
): Promise<void> {
  const commitSoon = resultCommitter(conversation.ledger);
  const outcomes = await Promise.allSettled(
    calls.map(async (call) => {
      const records = await commitSoon(await settleToolCall(conversation.scope, call, resumed));
      return records;
    }),
  );
  const committed = new Map<number, MessageRecord>();
  for (const outcome of outcomes) {
    if (outcome.status === 'fulfilled') for (const record of outcome.value) committed.set(record.seq, record);
  }
  conversation.messages.push(...[...committed.values()].sort((a, b) => a.seq - b.seq));
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}

/** Settles what the stored session left open: human decisions first, then crash-interrupted calls. */
async function settleOpenCalls(conversation: Conversation, decisions: Record<string, ApprovalDecision>) {
  const { scope, ledger, messages } = conversation;
  const folded = foldSession(messages);
  const fresh = scope.sessionId !== null ? checkDecisions(scope.sessionId, folded, decisions) : {};
  if (folded.awaitingApproval.length) {
    // A rejection and its result are one unit: split apart, a crash could leave a rejected call
    // looking merely interrupted, and a safeToRetry tool would then run.
    const units = decisionMessages(scope, folded.awaitingApproval, fresh);
    messages.push(...(await commitAll(ledger, planAppends(units, ledger.limits))));
    const approved = folded.awaitingApproval.filter((call) => fresh[call.id]?.approve === true);
    if (approved.length) await settleAndCommit(conversation, approved, false);
  }
  if (folded.interruptedCalls.length) await settleAndCommit(conversation, folded.interruptedCalls, true);
}

async function loop(
  agent: AgentDefinition,
  options: RunOptions,
  conversation: Conversation,
  signal: AbortSignal,
): Promise<RunResult> {
  const { ledger, messages, scope, usage } = conversation;
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
    headSeq: ledger.headSeq,
    messages,
    usage,
    pendingApprovals: pendingApprovals.map(toPendingApproval),
  });

  await settleOpenCalls(conversation, options.approvals ?? {});

  let pendingUser: NewMessage | null = null;
  const alreadyStored = options.messageId !== undefined && messages.some((m) => m.id === options.messageId);
  if (options.message !== undefined && !alreadyStored) {
    pendingUser = newMessage(options.messageId ?? scope.newId(), { role: 'user', content: options.message });
  } else {
    const folded = foldSession(messages);
    if (folded.status === 'complete') return result('complete', folded.response ?? '');
    if (messages.length === 0) {
      throw new InvalidArgumentError({ argument: 'message', reason: 'is required to start a new session' });
    }
  }

  for (let iteration = 0; iteration < agent.maxIterations; iteration++) {
    signal.throwIfAborted();
    const pending = pendingUser ? [pendingUser] : [];
    const response = await options.llm.generate({
      system: agent.instructions,
      messages: [...messages, ...pending.map((m) => ({ ...m, seq: 0 }))]
        .filter((m) => !INTERNAL_KINDS.has(m.kind ?? ''))
        .map(toLlmMessage),
      tools,
      signal,
    });
    usage.inputTokens += response.usage?.inputTokens ?? 0;
    usage.outputTokens += response.usage?.outputTokens ?? 0;
    const assistantId = scope.newId();
    const calls = assignToolCallIds(response.toolCalls, assistantId, messages);
    const assistant = newMessage(assistantId, {
      role: 'assistant',
      content: response.text,
      ...(calls.length ? { toolCalls: calls } : {}),
    });
    pendingUser = null;
    if (calls.length === 0) {
      const appends = planAppends(
        [...pending, assistant].map((m) => [m]),
        ledger.limits,
      );
      messages.push(...(await commitAll(ledger, appends, { releaseLease: true })));
      return result('complete', response.text);
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
    messages.push(...(await commitAll(ledger, firstWrite(pending, assistant, requests, ledger.limits)))); // write #1
    const runNow = calls.filter((call) => !waiting.includes(call));
    if (runNow.length) await settleAndCommit(conversation, runNow, false); // write #2, per settled result
    if (waiting.length) return result('awaiting-approval', response.text, waiting);
  }
  return result('max-iterations', '');
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', done);
      resolve();
    }, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Acquires the lease, waiting out a busy holder for at most `waitMs`. */
async function acquireWithin<T>(acquire: () => Promise<T>, waitMs: number, signal: AbortSignal): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await acquire();
    } catch (error) {
      const wait = isAgentStoreError(error, 'SESSION_BUSY')
        ? Math.min(error.retryAfterMs, deadline - Date.now())
        : -1;
      if (wait <= 0) throw error;
      signal.throwIfAborted();
      await abortableSleep(wait, signal);
    }
  }
}

/**
 * Runs an agent. With a durable store and a `sessionId`, every step is committed before and
 * after its tools run, under a single-writer lease, and a crashed run resumes where it stopped.
 */
export async function run(agent: AgentDefinition, options: RunOptions): Promise<RunResult> {
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
    return loop(agent, options, { ledger: statelessLedger(), messages: [], scope, usage }, outer);
  }

  const ttlMs = options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  const init: SessionInit = {
    agentName: agent.name,
    ownerId,
    tenantId,
    state: { usage: { inputTokens: 0, outputTokens: 0 } },
  };
  const holder = newId();
  let grantedAt = Date.now();
  const { epoch, session } = await acquireWithin(
    () => {
      grantedAt = Date.now();
      return store.acquireLease(sessionId, { holder, ttlMs, init });
    },
    options.leaseWaitMs ?? 0,
    outer,
  );
  const lease: LeaseToken = { holder, epoch };
  const leaseLost = new AbortController();
  const signal = AbortSignal.any([outer, leaseLost.signal]);
  const keeper = keepLeaseAlive({
    store,
    sessionId,
    lease,
    ttlMs,
    grantedAt,
    onLost: (error) => leaseLost.abort(error),
  });
  let released = false;
  try {
    const loaded = await store.load(sessionId);
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
    });
    const ledger: MessageLedger = {
      get headSeq() {
        return base.headSeq;
      },
      limits: base.limits,
      async commit(batch, commitOptions) {
        // A cancelled run still commits what finished (its effects happened); a lost lease cannot.
        leaseLost.signal.throwIfAborted();
        const records = await base.commit(batch, commitOptions);
        if (commitOptions?.releaseLease) released = true;
        return records;
      },
    };
    const scope: CallScope = {
      sessionId,
      ownerId,
      tenantId,
      signal,
      tools,
      newId,
      maxResultBytes: maxResultBytes(store.limits),
    };
    const outcome = await loop(agent, options, { ledger, messages, scope, usage }, signal);
    if (!released) {
      released = true;
      // Everything is committed; a failed release only delays the next run until the lease
      // expires, so the run still succeeds and reports it.
      const releaseError = await store.releaseLease(sessionId, lease).then(
        () => null,
        (error: unknown) => error,
      );
      if (releaseError !== null) return { ...outcome, leaseReleaseError: releaseError };
    }
    return outcome;
  } catch (error) {
    if (!released && !isAgentStoreError(error, 'LEASE_LOST')) {
      // The run's own error is what the caller needs; a failed release only delays the next
      // run until the lease expires, and is attached for diagnosis rather than dropped.
      await store.releaseLease(sessionId, lease).catch((releaseError: unknown) => {
        if (error instanceof Error) Object.assign(error, { leaseReleaseError: releaseError });
      });
    }
    throw error;
  } finally {
    keeper.stop();
  }
}
