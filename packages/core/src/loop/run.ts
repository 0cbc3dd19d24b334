import type { AgentDefinition } from '../agent.ts';
import { InvalidArgumentError, MemoryStoreNotDurableError, StoreConfigurationError } from '../errors.ts';
import type { Usage } from '../llm.ts';
import { durableRun } from './durable-run.ts';
import { maxResultBytes, statelessLedger } from './message-ledger.ts';
import { modelView } from './model-view.ts';
import { checkTools } from './run-option-shapes.ts';
import { checkRunOptions } from './run-options.ts';
import type { LoopOptions, RunOptions, RunResult } from './run-types.ts';
import { stepLoop } from './step-loop.ts';
import type { CallScope } from './tool-results.ts';

export type { RunOptions, RunResult } from './run-types.ts';

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
  const checked: RunOptions = typeof given === 'object' && given !== null ? { ...given } : given;
  const options: LoopOptions = { ...checked, user: checkRunOptions(checked, agent.name) };
  const { store, sessionId } = options;
  const tools = checkTools(agent.tools, options.tools);
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
    return stepLoop(
      agent,
      options,
      {
        ledger: statelessLedger(),
        messages: [],
        view: modelView(),
        scope,
        usage,
        callerBound: (work) => work,
        trailingWrite: null,
      },
      outer,
    );
  }

  return durableRun({ agent, options, store, sessionId, tools, ownerId, tenantId, outer, newId, usage });
}
