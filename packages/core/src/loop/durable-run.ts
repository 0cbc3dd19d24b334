import type { AgentDefinition } from '../agent.ts';
import { isAgentStoreError, LeaseLostError } from '../errors.ts';
import type { Usage } from '../llm.ts';
import type { JsonValue } from '../records.ts';
import type { AgentStore, LeaseToken, SessionInit } from '../store/contract.ts';
import type { AnyTool } from '../tool.ts';
import { type BackgroundErrorHandler, warnBackgroundError } from './background-errors.ts';
import type { Conversation } from './conversation.ts';
import { checkDeadlineOnRead } from './deadline-signal.ts';
import { type DurableCommits, durableCommits } from './durable-commit.ts';
import { durableLedger } from './durable-ledger.ts';
import { acquireWithin, mayHaveBeenGranted } from './lease-acquire.ts';
import { keepLeaseAlive } from './lease-keeper.ts';
import { attachReleaseError, leaseReleases } from './lease-release.ts';
import { leaseMachine } from './lease-state.ts';
import { maxResultBytes } from './message-ledger.ts';
import { modelView } from './model-view.ts';
import { decideRunEnd, releaseAfterWrites, releaseFailureGoesTo } from './run-end.ts';
import type { LoopOptions, RunResult } from './run-types.ts';
import { stepLoop } from './step-loop.ts';
import { storeWaits } from './store-waits.ts';
import type { CallScope } from './tool-results.ts';

const DEFAULT_LEASE_TTL_MS = 30_000;

/** What run() hands the durable part of a run, all checked. */
export interface DurableRunInput {
  agent: AgentDefinition;
  options: LoopOptions;
  store: AgentStore;
  sessionId: string;
  tools: Record<string, AnyTool>;
  ownerId: string | null;
  tenantId: string | null;
  /** The caller's signal (or one that never aborts). */
  outer: AbortSignal;
  newId: () => string;
  usage: Usage;
}

/**
 * A durable run: acquire the lease, load, resolve what the session left open, the step loop, and
 * the end of the run (release now, later or not at all: `decideRunEnd`).
 */
export async function durableRun(input: DurableRunInput): Promise<RunResult> {
  const { agent, options, store, sessionId, tools, ownerId, tenantId, outer, newId, usage } = input;
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
  // Aborted on the lease machine's move into lost or expired: it ends every wait on the store.
  const leaseLost = new AbortController();
  const machine = leaseMachine((error) => leaseLost.abort(error), { phase: 'acquiring' });
  const { epoch, session, sentAt } = await acquireWithin({
    store,
    sessionId,
    holder,
    ttlMs,
    init,
    waitMs,
    signal: outer,
    // Should the store grant an abandoned acquire after all, free that lease rather than leave
    // the session blocked for a whole TTL.
    onAbandoned: (attempt) =>
      attempt.then(
        (late) => releases.inBackground({ holder, epoch: late.epoch }, 'abandoned-acquire'),
        (failure: unknown) => {
          // A typed refusal is definite (nothing was granted); anything else may have been.
          if (mayHaveBeenGranted(failure)) {
            onBackgroundError(failure, { operation: 'acquireLease', sessionId, after: 'abandoned-acquire' });
          }
        },
      ),
  });
  machine.dispatch({ type: 'granted' });
  const lease: LeaseToken = { holder, epoch };
  const signal = AbortSignal.any([outer, leaseLost.signal]);
  const keeper = keepLeaseAlive({ store, sessionId, lease, ttlMs, sentAt, machine });
  // Until the run ends, ctx.signal's reads check the lease's local deadline.
  const stopDeadlineChecks = checkDeadlineOnRead(signal, keeper.assertHeld);
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
  const releaseLease = async () => {
    machine.dispatch({ type: 'release-sent', via: 'release-call' });
    const failed = await releases.release(lease, (answer) =>
      storeAnswer(keeper.watch(answer, unanswered('releaseLease'))),
    );
    machine.dispatch({ type: failed ? 'release-failed' : 'release-landed' });
    return failed;
  };
  /** Set once the session is loaded: what the end of the run reads (writes in flight, outcomes). */
  let opened: { commits: DurableCommits; conversation: Conversation } | null = null;
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
    const commits = durableCommits({
      base,
      keeper,
      machine,
      waits,
      isOurLeaseLost: (error) => isOurLeaseLost(error, sessionId, holder),
    });
    const scope: CallScope = {
      sessionId,
      // Part of every idempotency key: a call of a re-created session never reuses a deleted one's.
      incarnationId: session.incarnationId ?? null,
      ownerId,
      tenantId,
      signal,
      tools: guardTools(tools, keeper.assertHeld),
      newId,
      maxResultBytes: maxResultBytes(store.limits),
    };
    const conversation: Conversation = {
      ledger: commits.ledger,
      messages,
      view: modelView(messages),
      scope,
      usage,
      callerBound: storeAnswer,
      trailingWrite: null,
    };
    opened = { commits, conversation };
    const outcome = await stepLoop(agent, options, conversation, signal);
    const end = decideRunEnd({
      outcome: 'succeeded',
      lease: machine.state.phase,
      errorSaysLeaseLost: false,
      outcomeUnconfirmed: false,
      writesInFlight: false,
    });
    if (end.release === 'now') {
      // A failed release only delays the next run until the lease expires: the run still
      // succeeds and reports it. Cut short by the caller's abort, it is followed instead.
      const failed = await releaseLease();
      if (failed) return { ...outcome, leaseReleaseError: failed.error };
    }
    return outcome;
  } catch (error) {
    // Results of finished handlers still being sent after run() gave up waiting (the caller
    // aborted; otherwise the lease is gone, which the run's error says): their failure reaches
    // nobody else.
    const trailing = opened?.conversation.trailingWrite;
    const trailingOpen = trailing && !trailing.settled ? trailing.done : null;
    if (outer.aborted) {
      trailingOpen?.catch((failure: unknown) =>
        onBackgroundError(failure, { operation: 'append', sessionId, after: 'abandoned-run' }),
      );
    }
    const abandoned = opened?.commits.inFlight() ?? null;
    const outcomeUnconfirmed = () => opened?.commits.outcomeUnconfirmed ?? false;
    const end = decideRunEnd({
      outcome: 'failed',
      lease: machine.state.phase,
      errorSaysLeaseLost: isOurLeaseLost(error, sessionId, holder),
      outcomeUnconfirmed: outcomeUnconfirmed(),
      writesInFlight: abandoned !== null || trailingOpen !== null,
    });
    if (end.release === 'after-writes') {
      // Unawaited: nobody is waiting for this run any more. Once the store has answered every
      // append sent (a commit may have stopped waiting for one first).
      const releaseLater = () =>
        (opened?.commits.appendsSettled() ?? Promise.resolve()).then(() => {
          if (releaseAfterWrites({ lease: machine.state.phase, outcomeUnconfirmed: outcomeUnconfirmed() })) {
            releases.inBackground(lease, 'abandoned-append');
          }
        });
      Promise.allSettled([abandoned, trailingOpen]).then(releaseLater);
    } else if (end.release === 'now') {
      const failed = await releaseLease();
      if (failed) {
        const goesTo = releaseFailureGoesTo({
          error,
          sessionId,
          callerReason: outer.reason,
          releaseError: failed.error,
        });
        if (goesTo === 'background' || !attachReleaseError(error, failed.error)) {
          releases.report(failed.error, 'failed-run');
        }
      }
    }
    throw error;
  } finally {
    stopDeadlineChecks();
    // Renewals stop with the run: results still being sent go out within the lease's remaining
    // window (every append checks the local deadline first).
    keeper.stop();
    waits.stop();
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
