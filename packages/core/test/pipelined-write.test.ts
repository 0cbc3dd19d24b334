import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type AgentDefinition,
  type AgentStore,
  defineAgent,
  isAgentStoreError,
  run,
  SeqConflictError,
  tool,
} from '../src/index.ts';
import {
  durableMemoryStore,
  faultyStore,
  isSimulatedCrash,
  SimulatedCrashError,
  scriptedLlm,
} from '../src/testing/index.ts';
import { resumeUntilComplete, sideEffectLedger } from './fixtures.ts';
import { drainEventLoop, gatedStore, loggedLlm, type ModelHook } from './pipeline-fixtures.ts';

// One commit on a step's critical path: write #2 (the results) is in flight while the next model
// request is sent; the next append waits for it. Every ordering here is forced by gates, never timed.

const TTL = 60_000;

/** One side-effecting tool `send`; with `approvalAbove`, a call sending more waits for a human. */
function stepAgent(ledger = sideEffectLedger(), maxIterations = 10, approvalAbove?: number) {
  return defineAgent({
    name: 'pipeline',
    instructions: 'Work.',
    maxIterations,
    tools: {
      send: tool({
        description: 'A side effect (not safe to retry)',
        input: z.object({ n: z.number() }),
        ...(approvalAbove !== undefined
          ? { needsApproval: ({ n }: { n: number }) => n > approvalAbove }
          : {}),
        handler: ({ n }, ctx) => {
          ledger.calls.push({
            tool: 'send',
            toolCallId: ctx.toolCallId,
            idempotencyKey: ctx.idempotencyKey,
            attempt: ctx.attempt,
          });
          return { sent: n };
        },
      }),
    },
  });
}

const twoSteps = [
  { toolCalls: [{ id: 'c1', name: 'send', input: { n: 1 } }] },
  { toolCalls: [{ id: 'c2', name: 'send', input: { n: 2 } }] },
  { text: 'done' },
];

const expectContiguous = async (store: AgentStore, sessionId: string) => {
  const loaded = (await store.load(sessionId))!;
  expect(loaded.messages.map((m) => m.seq)).toEqual(loaded.messages.map((_, i) => i + 1));
  expect(loaded.session.headSeq).toBe(loaded.messages.length);
  const results = loaded.messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId);
  expect(new Set(results).size).toBe(results.length);
  return loaded;
};

/**
 * Starts a two-step run whose `n`-th append waits on a gate, and returns once the run has reached
 * the gate and done everything it could meanwhile. (Append 1 is write #1 of step 1, append 2 its
 * results, append 3 write #1 of step 2, append 4 its results, append 5 the final answer.)
 */
async function heldRun(
  n: number,
  options: { hook?: ModelHook; agent?: AgentDefinition; signal?: AbortSignal } = {},
) {
  const inner = durableMemoryStore();
  const gated = gatedStore(inner);
  const gate = gated.hold(n);
  const model = loggedLlm(twoSteps, gated.log, options.hook);
  let settled = false;
  const running = run(options.agent ?? stepAgent(), {
    store: gated.store,
    sessionId: 's',
    message: 'go',
    llm: model.llm,
    leaseTtlMs: TTL,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  running
    .catch(() => undefined)
    .finally(() => {
      settled = true;
    });
  await gate.reached;
  await drainEventLoop();
  return { inner, log: gated.log, gate, running, requests: model.requests, settled: () => settled };
}

const resumeOn = (store: AgentStore, agent = stepAgent()) =>
  resumeUntilComplete(agent, { store, sessionId: 's', llm: loggedLlm(twoSteps, []).llm, leaseTtlMs: 300 });

const conflict = () => new SeqConflictError({ sessionId: 's', expectedSeq: 2, actualSeq: 3 });

describe('write #2 overlaps the next model call', () => {
  it('sends the next model request while write #2 is held, and starts write #1 only after it lands', async () => {
    const { inner, log, gate, running, requests } = await heldRun(2);
    // The second request went out with write #2 still held, carrying the result it will store.
    expect(log).toContain('model 2 sent');
    expect(log).toContain('model 2 answered');
    expect(log).not.toContain('append 3 start');
    expect(requests[1]!.find((m) => m.toolCallId === 'c1')?.content).toBe('{"sent":1}');
    gate.open();
    const result = await running;
    expect(result.status).toBe('complete');
    // The request even went out before write #2 started: a synchronous driver's commit (SQLite)
    // then runs while the model works, not before.
    expect(log.indexOf('model 2 sent')).toBeLessThan(log.indexOf('append 2 start'));
    expect(log.indexOf('append 2 landed')).toBeLessThan(log.indexOf('append 3 start'));
    const loaded = await expectContiguous(inner, 's');
    expect(result.messages).toEqual(loaded.messages);
    expect(loaded.messages.map((m) => m.role).join()).toBe('user,assistant,tool,assistant,tool,assistant');
  });

  it('commits the final answer, and returns, only after the last write #2 has landed', async () => {
    const { inner, log, gate, running, settled } = await heldRun(4);
    expect(log).toContain('model 3 answered');
    expect(log).not.toContain('append 5 start');
    expect(settled()).toBe(false);
    gate.open();
    expect((await running).status).toBe('complete');
    expect(log.slice(-3)).toEqual(['append 4 landed', 'append 5 start', 'append 5 landed']);
    await expectContiguous(inner, 's');
  });

  it("returns max-iterations only after the last step's results are stored", async () => {
    const { inner, gate, running, settled } = await heldRun(2, { agent: stepAgent(sideEffectLedger(), 1) });
    expect(settled()).toBe(false);
    gate.open();
    const result = await running;
    expect(result.status).toBe('max-iterations');
    const loaded = await expectContiguous(inner, 's');
    expect(loaded.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'c1' });
    expect(result.messages).toEqual(loaded.messages);
  });

  it('a failing write #2 aborts the in-flight model request; the run fails with the write error and resumes correctly', async () => {
    const ledger = sideEffectLedger();
    const agent = stepAgent(ledger);
    let abortReason: unknown = null;
    // A model that ignores its signal and never answers: the run must not wait for it.
    const hook: ModelHook = (call, { signal }) => {
      if (call !== 2) return;
      signal.addEventListener('abort', () => {
        abortReason = signal.reason;
      });
      return new Promise<void>(() => {});
    };
    const { inner, log, gate, running } = await heldRun(2, { hook, agent });
    expect(log.slice(-2)).toEqual(['model 2 sent', 'append 2 start']);
    const lost = conflict();
    gate.fail(lost);
    const error = await running.catch((e: unknown) => e);
    expect(isAgentStoreError(error, 'SEQ_CONFLICT')).toBe(true);
    expect(error).toBe(lost);
    expect(abortReason).toBe(lost);
    expect(ledger.calls).toHaveLength(1);

    // The result never landed: c1 is an orphan, and `send` is not safe to retry.
    const resumed = await resumeOn(inner, agent);
    expect(resumed.status).toBe('complete');
    expect(ledger.count('c1')).toBe(1);
    expect(ledger.count('c2')).toBe(1);
    const loaded = await expectContiguous(inner, 's');
    expect(loaded.messages.find((m) => m.toolCallId === 'c1')?.kind).toBe('tool-durability-error');
  });

  it('when the model and write #2 both fail, throws the write error with the model error attached', async () => {
    const modelDown = new Error('model down');
    const { gate, running } = await heldRun(2, {
      hook: (call) => {
        if (call === 2) throw modelDown;
      },
    });
    const lost = conflict();
    gate.fail(lost);
    const error = await running.catch((e: unknown) => e);
    expect(error).toBe(lost);
    expect((error as { concurrentError?: unknown }).concurrentError).toBe(modelDown);
  });

  it('a failed model call surfaces only after write #2 has landed, and the step is stored', async () => {
    const { inner, gate, running, settled } = await heldRun(2, {
      hook: (call) => {
        if (call === 2) throw new Error('model down');
      },
    });
    expect(settled()).toBe(false);
    gate.open();
    await expect(running).rejects.toThrow('model down');
    const loaded = await expectContiguous(inner, 's');
    expect(loaded.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'c1', content: '{"sent":1}' });
    // The lease was released: the session resumes at once with the next model call.
    const resumed = await run(stepAgent(), {
      store: inner,
      sessionId: 's',
      llm: loggedLlm(twoSteps, []).llm,
    });
    expect(resumed.status).toBe('complete');
  });

  it('a caller abort during the overlapped model call does not wait for write #2; the write still lands, then the lease is released', async () => {
    const controller = new AbortController();
    const { inner, log, gate, running } = await heldRun(2, {
      signal: controller.signal,
      hook: (call) => {
        if (call === 2) controller.abort(new Error('caller gave up'));
      },
    });
    // Write #2 is still held (it might never answer): the run settles without it.
    await expect(running).rejects.toThrow('caller gave up');
    expect(log).not.toContain('append 2 landed');
    // Not released meanwhile: that would fence the write and drop a result whose effect happened.
    expect((await inner.load('s'))!.session.lease).not.toBeNull();
    gate.open();
    await drainEventLoop();
    const loaded = await expectContiguous(inner, 's');
    expect(loaded.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'c1' });
    expect(loaded.session.lease).toBeNull();
  });
});

/** `stepAgent`'s tool, logging when its schema and its handler run. */
function loggingAgent(log: string[]) {
  return defineAgent({
    name: 'pipeline',
    instructions: 'Work.',
    maxIterations: 10,
    tools: {
      send: tool({
        description: 'A side effect (not safe to retry)',
        input: {
          '~standard': {
            version: 1 as const,
            vendor: 'test',
            validate: (value: unknown) => {
              log.push(`schema ${JSON.stringify(value)}`);
              return { value };
            },
          },
        },
        handler: (input) => {
          const { n } = input as { n: number };
          log.push(`handler ${n}`);
          return { sent: n };
        },
      }),
    },
  });
}

describe('a fresh call is readied while write #1 is in flight', () => {
  it('its schema runs while write #1 is held; its handler only once write #1 has landed', async () => {
    const log: string[] = [];
    const { inner, gate, running } = await heldRun(1, { agent: loggingAgent(log) });
    expect(log).toEqual(['schema {"n":1}']);
    gate.open();
    expect((await running).status).toBe('complete');
    expect(log).toEqual(['schema {"n":1}', 'handler 1', 'schema {"n":2}', 'handler 2']);
    await expectContiguous(inner, 's');
  });

  it('its schema runs only after write #1 was sent, by a store that sends once the microtasks are done (as pg’s pool does)', async () => {
    const log: string[] = [];
    const inner = durableMemoryStore();
    // pg-pool hands a pooled client over in a process.nextTick, which runs only once the
    // microtask queue is empty: work queued as microtasks before it would delay the send.
    const store: AgentStore = {
      ...inner,
      append: (sessionId, input) =>
        new Promise((resolve, reject) => {
          process.nextTick(() => {
            if (input.messages.some((message) => message.toolCalls?.length)) log.push('write #1 sent');
            inner.append(sessionId, input).then(resolve, reject);
          });
        }),
    };
    const llm = scriptedLlm([{ toolCalls: [{ id: 'c1', name: 'send', input: { n: 1 } }] }, { text: 'done' }]);
    const result = await run(loggingAgent(log), { store, sessionId: 's', message: 'go', llm });
    expect(result.status).toBe('complete');
    expect(log).toEqual(['write #1 sent', 'schema {"n":1}', 'handler 1']);
  });

  it('a write #1 that fails runs no handler, and the readied call is dropped quietly', async () => {
    const log: string[] = [];
    const { inner, gate, running } = await heldRun(1, { agent: loggingAgent(log) });
    gate.fail(conflict());
    await expect(running).rejects.toBeInstanceOf(SeqConflictError);
    await drainEventLoop();
    expect(log).toEqual(['schema {"n":1}']);
    expect((await inner.load('s'))?.messages ?? []).toEqual([]);
  });
});

describe('the overlapped request’s signal', () => {
  it('follows the run’s signal while the request is out, and is let go when the run ends (no listener kept per step)', async () => {
    const controller = new AbortController();
    const signals: AbortSignal[] = [];
    const listening: number[] = [];
    const steps = 30;
    const script = [
      ...Array.from({ length: steps }, (_, n) => ({
        toolCalls: [{ id: `c${n}`, name: 'send', input: { n } }],
      })),
      { text: 'done' },
    ];
    let call = 0;
    const result = await run(stepAgent(sideEffectLedger(), steps + 1), {
      store: durableMemoryStore(),
      sessionId: 's',
      message: 'go',
      signal: controller.signal,
      llm: {
        async generate({ signal }) {
          signals.push(signal);
          listening.push(getEventListeners(controller.signal, 'abort').length);
          expect(signal.aborted).toBe(false);
          return { text: '', toolCalls: [], ...script[call++] };
        },
      },
    });
    expect(result.status).toBe('complete');
    expect(signals).toHaveLength(steps + 1);
    // As many listeners on the caller's signal at the last request as at the first: none per step.
    expect(new Set(listening).size).toBe(1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    // Every request after the first overlapped a write #2; aborting the caller's signal now
    // reaches none of them: the run unlinked their signal from the caller's when it ended.
    controller.abort(new Error('later'));
    expect(signals.slice(1).filter((signal) => signal.aborted)).toEqual([]);
  });
});

describe('crashes around the overlap', () => {
  it('process dies with write #2 landed and the next model call in flight: resume continues, nothing runs twice', async () => {
    const inner = durableMemoryStore();
    const ledger = sideEffectLedger();
    const agent = stepAgent(ledger);
    // Dead from the crash on: not even the lease release gets through.
    const gated = gatedStore(
      faultyStore(inner, { op: 'releaseLease', call: 1, when: 'before', effect: 'crash' }),
    );
    const { llm } = loggedLlm(twoSteps, gated.log, (call) => {
      // The process dies while the model is thinking (the crash reaches the run from the model side).
      if (call === 2) throw new SimulatedCrashError('during model call 2');
    });
    // The "dead" process's release fails with the crash too: reported, not on the crash error.
    const background: unknown[] = [];
    await expect(
      run(agent, {
        store: gated.store,
        sessionId: 's',
        message: 'go',
        llm,
        leaseTtlMs: 300,
        onBackgroundError: (error) => background.push(error),
      }),
    ).rejects.toSatisfy(isSimulatedCrash);
    expect(gated.log).toContain('append 2 landed');
    await drainEventLoop();
    expect(background).toHaveLength(1);
    expect(isSimulatedCrash(background[0])).toBe(true);
    const resumed = await resumeOn(inner, agent);
    expect(resumed.status).toBe('complete');
    expect(ledger.calls.map((c) => c.toolCallId)).toEqual(['c1', 'c2']);
    const loaded = await expectContiguous(inner, 's');
    expect(loaded.messages.find((m) => m.toolCallId === 'c1')?.content).toBe('{"sent":1}');
  });

  for (const when of ['before', 'after'] as const) {
    it(`process dies ${when} write #2 commits, while the next model call is in flight`, async () => {
      const inner = durableMemoryStore();
      const ledger = sideEffectLedger();
      const agent = stepAgent(ledger);
      const faulty = faultyStore(inner, { op: 'append', call: 2, when, effect: 'crash' });
      const log: string[] = [];
      const { llm, signals } = loggedLlm(twoSteps, log);
      await expect(
        run(agent, { store: faulty, sessionId: 's', message: 'go', llm, leaseTtlMs: 300 }),
      ).rejects.toSatisfy(isSimulatedCrash);
      expect(log).toContain('model 2 sent');
      expect(signals[1]!.aborted).toBe(true);
      const resumed = await resumeOn(inner, agent);
      expect(resumed.status).toBe('complete');
      expect(ledger.count('c1')).toBe(1);
      expect(ledger.count('c2')).toBe(1);
      const loaded = await expectContiguous(inner, 's');
      const c1 = loaded.messages.find((m) => m.toolCallId === 'c1')!;
      // before: the result never landed, so the orphan gets a durability error; after: it stands.
      if (when === 'before') expect(c1.kind).toBe('tool-durability-error');
      else expect(c1.content).toBe('{"sent":1}');
    });
  }
});

describe('approvals around the overlap', () => {
  const approvalAgent = (ledger = sideEffectLedger()) => stepAgent(ledger, 10, 100);
  const steps = [
    {
      toolCalls: [
        { id: 'big', name: 'send', input: { n: 500 } },
        { id: 'small', name: 'send', input: { n: 5 } },
      ],
    },
    { text: 'done' },
  ];

  it('returns awaiting-approval only after the results of the calls that ran have landed', async () => {
    const inner = durableMemoryStore();
    const gated = gatedStore(inner);
    const gate = gated.hold(2); // write #1 (with the approval request), then the result of `small`
    let settled = false;
    const running = run(approvalAgent(), {
      store: gated.store,
      sessionId: 's',
      message: 'go',
      llm: loggedLlm(steps, gated.log).llm,
    }).finally(() => {
      settled = true;
    });
    await gate.reached;
    await drainEventLoop();
    expect(settled).toBe(false);
    gate.open();
    const paused = await running;
    expect(paused.status).toBe('awaiting-approval');
    const loaded = await expectContiguous(inner, 's');
    expect(loaded.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'small' });
    expect(paused.messages).toEqual(loaded.messages);
  });

  it('an approved call resumes with its result in flight while the model is already asked for the next step', async () => {
    const inner = durableMemoryStore();
    const ledger = sideEffectLedger();
    await run(approvalAgent(ledger), {
      store: inner,
      sessionId: 's',
      message: 'go',
      llm: loggedLlm(steps, []).llm,
    });
    const gated = gatedStore(inner);
    const gate = gated.hold(2); // the decision, then the approved call's result
    const { llm, requests } = loggedLlm(steps, gated.log);
    const running = run(approvalAgent(ledger), {
      store: gated.store,
      sessionId: 's',
      llm,
      approvals: { big: { approve: true } },
    });
    await gate.reached;
    await drainEventLoop();
    expect(gated.log).toContain('model 1 sent');
    expect(requests[0]!.find((m) => m.toolCallId === 'big')?.content).toBe('{"sent":500}');
    expect(gated.log).not.toContain('append 3 start');
    gate.open();
    expect((await running).status).toBe('complete');
    expect(gated.log.indexOf('append 2 landed')).toBeLessThan(gated.log.indexOf('append 3 start'));
    expect(ledger.count('big')).toBe(1);
    await expectContiguous(inner, 's');
  });
});
