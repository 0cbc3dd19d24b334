import type { AgentDefinition } from '../agent.ts';
import { InvalidArgumentError } from '../errors.ts';
import { foldSession } from '../inspect/session-fold.ts';
import type { LlmResponse, LlmToolSpec } from '../llm.ts';
import type { NewMessage, ToolCall } from '../records.ts';
import { approvalRequestMessages, toPendingApproval } from './approvals.ts';
import {
  type Conversation,
  commitNow,
  firstWrite,
  newMessage,
  type ResultsInFlight,
  resolveOpenCalls,
  runCallsAndCommit,
  throwOnceLanded,
  tokenCount,
} from './conversation.ts';
import { planAppends } from './message-ledger.ts';
import { type ModelStep, modelStep } from './model-step.ts';
import { onNextTurn } from './next-turn.ts';
import type { LoopOptions, RunResult } from './run-types.ts';
import { toolCallIds } from './tool-call-ids.ts';
import { needsApproval, prepareFreshCall } from './tool-results.ts';

export async function stepLoop(
  agent: AgentDefinition,
  options: LoopOptions,
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
  let inFlight: ResultsInFlight | null = null;
  const landResults = async () => {
    const write = inFlight;
    inFlight = null;
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
   * write aborts the request, and the call returns only once the write has landResults.
   */
  const callModel = async (extra: NewMessage[]) => {
    const request = { system: agent.instructions, messages: view.request(extra), tools };
    const write = inFlight;
    inFlight = null;
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
    inFlight = await resolveOpenCalls(conversation, options.approvals ?? {});

    // The user's message, until the first write #1 carries it.
    let userMessage: NewMessage | null = null;
    const alreadyStored = options.messageId !== undefined && messages.some((m) => m.id === options.messageId);
    if (options.user !== undefined && !alreadyStored) {
      userMessage = newMessage(options.messageId ?? scope.newId(), { role: 'user', ...options.user });
    } else if (inFlight === null) {
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
      const first = userMessage ? [userMessage] : [];
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
      userMessage = null;
      // callModel has landResults write #2 of the previous step: nothing is in flight from here on.
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
      // lands. Observed by runCallsAndCommit, or moot if write #1 fails.
      const prepared = runNow.map((call) => onNextTurn(() => prepareFreshCall(scope, call), writing));
      for (const ready of prepared) ready.catch(() => undefined);
      await writing;
      if (runNow.length) inFlight = await runCallsAndCommit(conversation, runNow, false, prepared); // write #2, in flight
      if (waiting.length) {
        await landResults();
        return result('awaiting-approval', assistant.content, waiting);
      }
    }
    await landResults();
    return result('max-iterations', '');
  } catch (error) {
    const write = inFlight;
    inFlight = null;
    if (!write) throw error;
    return throwOnceLanded(write.land(), error, signal);
  } finally {
    signal.removeEventListener('abort', followRun);
  }
}
