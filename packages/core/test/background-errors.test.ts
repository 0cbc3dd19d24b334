import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  type AgentStore,
  type AppendInput,
  type BackgroundErrorContext,
  CorruptRecordError,
  defineAgent,
  InvalidArgumentError,
  LeaseLostError,
  type LlmAdapter,
  run,
  SessionBusyError,
  tool,
  UnexpectedReplyError,
} from '../src/index.ts';
import { keepLeaseAlive } from '../src/loop/lease-keeper.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';
import { drainEventLoop, gatedStore } from './pipeline-fixtures.ts';

// Every failure of a lease release reaches the caller (`leaseReleaseError`) or onBackgroundError
// (default: console.warn), never nowhere: a release after an abandoned acquire or append, one
// run() stopped waiting for when the caller aborted, one that fails after the run failed with a
// value that cannot carry it. And the lease is never freed while an append may still land.

const agent = defineAgent({
  name: 'background',
  instructions: '',
  tools: {
    send: tool({ description: 'a side effect', input: z.object({}), handler: () => ({ sent: true }) }),
  },
});
/** Ends at max-iterations when the model keeps calling tools: it then releases with a call of its own. */
const oneStep = defineAgent({ ...agent, maxIterations: 1 });

const callSend = { toolCalls: [{ id: 'c1', name: 'send', input: {} }] };
const llm = () => scriptedLlm([callSend, { text: 'done' }]);

type Reported = { error: unknown; context: BackgroundErrorContext };

/** An onBackgroundError that keeps what it is handed. */
function recorder() {
  const reported: Reported[] = [];
  const onBackgroundError = (error: unknown, context: BackgroundErrorContext) => {
    reported.push({ error, context });
  };
  return { reported, onBackgroundError };
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((a, b) => {
    resolve = a;
    reject = b;
  });
  return { promise, resolve, reject };
}

/** A store whose releases go through `releaseLease` (counted); everything else through `inner`. */
function withRelease(inner: AgentStore, releaseLease: AgentStore['releaseLease']) {
  const gated = gatedStore(inner);
  let releases = 0;
  const store: AgentStore = {
    ...gated.store,
    releaseLease(id, lease) {
      releases += 1;
      return releaseLease(id, lease);
    },
  };
  return { store, gated, releases: () => releases };
}

/** A model that is sent one request and answers only by failing once the run aborts it. */
function hangingLlm(rejectWith?: (signal: AbortSignal) => unknown) {
  const sent = deferred();
  const adapter: LlmAdapter = {
    generate: ({ signal }) => {
      sent.resolve();
      return new Promise((_, reject) =>
        signal.addEventListener('abort', () => reject(rejectWith ? rejectWith(signal) : signal.reason), {
          once: true,
        }),
      );
    },
  };
  return { adapter, sent: sent.promise };
}

/**
 * Runs the agent on session `s` (options override), aborts with `reason` once `reached` resolves,
 * and resolves with what run() rejected with.
 */
async function abortWhen(reached: Promise<void>, store: AgentStore, reason: unknown, options: object = {}) {
  const controller = new AbortController();
  const running = run(agent, {
    store,
    sessionId: 's',
    message: 'go',
    llm: llm(),
    signal: controller.signal,
    ...options,
  }).catch((error: unknown) => error);
  await reached;
  controller.abort(reason);
  return running;
}

/** Runs the agent with a model that fails with `thrown`; resolves with what run() rejected with. */
function failWithModelError(store: AgentStore, thrown: unknown, options: object = {}) {
  const failing: LlmAdapter = { generate: () => Promise.reject(thrown) };
  return run(agent, { store, sessionId: 's', message: 'go', llm: failing, ...options }).catch(
    (e: unknown) => e,
  );
}

/** Aborts a run once its model was sent the first request (no append in flight). */
function abortDuringModelCall(
  store: AgentStore,
  reason: unknown,
  options: object = {},
  rejectWith?: (signal: AbortSignal) => unknown,
) {
  const model = hangingLlm(rejectWith);
  return abortWhen(model.sent, store, reason, { ...options, llm: model.adapter });
}

/** Aborts a run while its `n`-th append is unanswered, then lets that append through. */
async function abandonAppend(
  store: AgentStore,
  gated: ReturnType<typeof gatedStore>,
  n: number,
  options: object,
) {
  const held = gated.hold(n);
  const reason = new Error('caller gave up');
  expect(await abortWhen(held.reached, store, reason, options)).toBe(reason);
  held.open();
  await drainEventLoop();
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a release after an abandoned append', () => {
  it('its failure reaches onBackgroundError with the session and the cause', async () => {
    const failure = new Error('connection reset during release');
    const { store, gated, releases } = withRelease(durableMemoryStore(), () => Promise.reject(failure));
    const { reported, onBackgroundError } = recorder();
    await abandonAppend(store, gated, 2, { onBackgroundError });
    expect(releases()).toBe(1);
    expect(reported).toEqual([
      { error: failure, context: { operation: 'releaseLease', sessionId: 's', after: 'abandoned-append' } },
    ]);
  });

  it('a store whose releaseLease throws instead of rejecting is reported the same way', async () => {
    const failure = new Error('thrown, not rejected');
    const { store, gated } = withRelease(durableMemoryStore(), () => {
      throw failure;
    });
    const { reported, onBackgroundError } = recorder();
    await abandonAppend(store, gated, 2, { onBackgroundError });
    expect(reported.map((r) => [r.error, r.context.after])).toEqual([[failure, 'abandoned-append']]);
  });

  it('by default it is written with console.warn, naming the session', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const failure = new Error('server gone');
    const { store, gated } = withRelease(durableMemoryStore(), () => Promise.reject(failure));
    await abandonAppend(store, gated, 2, {});
    expect(warn).toHaveBeenCalledTimes(1);
    const [text, error] = warn.mock.calls[0]!;
    expect(text).toContain('(session "s")');
    expect(text).toContain('the session stays busy until the lease expires');
    expect(error).toBe(failure);
  });

  it('a release that succeeds reports nothing, and frees the session at once', async () => {
    const inner = durableMemoryStore();
    const gated = gatedStore(inner);
    const { reported, onBackgroundError } = recorder();
    await abandonAppend(gated.store, gated, 2, { onBackgroundError });
    expect(reported).toEqual([]);
    const next = await run(agent, { store: inner, sessionId: 's', llm: llm() });
    expect(next.status).toBe('complete');
  });

  it('an abandoned final append that carried the release and landed frees the lease: no release is sent', async () => {
    const inner = durableMemoryStore();
    const { store, gated, releases } = withRelease(inner, () =>
      Promise.reject(new Error('must not be sent')),
    );
    const { reported, onBackgroundError } = recorder();
    // Appends: 1 write #1, 2 its result, 3 the final answer with releaseLease.
    await abandonAppend(store, gated, 3, { onBackgroundError });
    expect(releases()).toBe(0);
    expect(reported).toEqual([]);
    expect((await run(agent, { store: inner, sessionId: 's', llm: llm() })).status).toBe('complete');
  });

  it('is not sent while the append is unanswered, even after the run stopped waiting for it (the lease safe window)', async () => {
    const inner = durableMemoryStore();
    const { store, gated, releases } = withRelease(inner, (id, lease) => inner.releaseLease(id, lease));
    const held = gated.hold(2);
    const ttl = 300;
    const { reported, onBackgroundError } = recorder();
    await abortWhen(held.reached, store, new Error('caller gave up'), { leaseTtlMs: ttl, onBackgroundError });
    // Past the safe window (ttl − ttl/5), when the commit stops waiting for the append.
    await new Promise((resolve) => setTimeout(resolve, ttl + 50));
    expect(releases()).toBe(0);
    held.open();
    await drainEventLoop();
    // The append landed under the lease (nobody fenced it), then the lease was released.
    expect((await inner.load('s'))!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(releases()).toBe(1);
    // The run had given that result's append up (unanswered for the safe window): reported, not lost.
    expect(reported.map((r) => r.context)).toEqual([
      { operation: 'append', sessionId: 's', after: 'abandoned-run' },
    ]);
  });
});

describe('a release run() stopped waiting for when the caller aborted', () => {
  it('the run rejects with the abort reason at once; a later failure is reported, not put on the error', async () => {
    const answer = deferred<{ released: boolean }>();
    const { store } = withRelease(durableMemoryStore(), () => answer.promise);
    const { reported, onBackgroundError } = recorder();
    const reason = new Error('caller gave up');
    const error = await abortDuringModelCall(store, reason, { onBackgroundError });
    expect(error).toBe(reason);
    expect((error as { leaseReleaseError?: unknown }).leaseReleaseError).toBeUndefined();
    const failure = new Error('connection reset during release');
    answer.reject(failure);
    await drainEventLoop();
    expect(reported).toEqual([
      { error: failure, context: { operation: 'releaseLease', sessionId: 's', after: 'unanswered-release' } },
    ]);
  });

  it('a release that succeeds later is no error anywhere, whatever the model rejected with', async () => {
    const answer = deferred<{ released: boolean }>();
    const inner = durableMemoryStore();
    const { store } = withRelease(inner, (id, lease) =>
      answer.promise.then(() => inner.releaseLease(id, lease)),
    );
    const { reported, onBackgroundError } = recorder();
    const error = (await abortDuringModelCall(
      store,
      new Error('caller gave up'),
      { onBackgroundError },
      () => new DOMException('aborted', 'AbortError'),
    )) as { leaseReleaseError?: unknown };
    expect(error).toBeInstanceOf(DOMException);
    expect(error.leaseReleaseError).toBeUndefined();
    answer.resolve({ released: true });
    await drainEventLoop();
    expect(reported).toEqual([]);
    expect((await inner.load('s'))!.session.lease).toBeNull();
  });

  it('during the final release of a finished run: it resolves without a false leaseReleaseError', async () => {
    const answer = deferred<{ released: boolean }>();
    let releasing!: () => void;
    const releaseSent = new Promise<void>((resolve) => {
      releasing = resolve;
    });
    const { store } = withRelease(durableMemoryStore(), () => {
      releasing();
      return answer.promise;
    });
    const { reported, onBackgroundError } = recorder();
    const controller = new AbortController();
    const running = run(oneStep, {
      store,
      sessionId: 's',
      message: 'go',
      llm: scriptedLlm([callSend, callSend]),
      signal: controller.signal,
      onBackgroundError,
    });
    await releaseSent;
    controller.abort(new Error('caller gave up'));
    const result = await running;
    expect(result.status).toBe('max-iterations');
    expect(result.leaseReleaseError).toBeUndefined();
    const failure = new Error('release lost');
    answer.reject(failure);
    await drainEventLoop();
    expect(reported.map((r) => [r.error, r.context.after])).toEqual([[failure, 'unanswered-release']]);
  });
});

describe('a release the run waited for', () => {
  it('a store whose releaseLease throws: a finished run resolves with it as leaseReleaseError', async () => {
    const failure = new Error('thrown by releaseLease');
    const { store } = withRelease(durableMemoryStore(), () => {
      throw failure;
    });
    const result = await run(oneStep, {
      store,
      sessionId: 's',
      message: 'go',
      llm: scriptedLlm([callSend, callSend]),
    });
    expect(result.status).toBe('max-iterations');
    expect(result.leaseReleaseError).toBe(failure);
  });

  it('a store whose releaseLease throws: an aborted run still rejects with the abort reason, which is left as it is', async () => {
    const failure = new Error('thrown by releaseLease');
    const { store } = withRelease(durableMemoryStore(), () => {
      throw failure;
    });
    const { reported, onBackgroundError } = recorder();
    const reason = new Error('caller gave up');
    const error = await abortDuringModelCall(store, reason, { onBackgroundError });
    expect(error).toBe(reason);
    // The caller's own abort reason is not changed (several runs may share it): reported instead.
    expect(Object.hasOwn(reason, 'leaseReleaseError')).toBe(false);
    await drainEventLoop();
    expect(reported).toEqual([
      { error: failure, context: { operation: 'releaseLease', sessionId: 's', after: 'failed-run' } },
    ]);
  });

  for (const [label, reason] of [
    ['a string', 'user closed the tab'],
    ['a frozen error', Object.freeze(new Error('frozen'))],
  ] as const) {
    it(`a run that fails with ${label} cannot carry the release's failure: onBackgroundError gets it`, async () => {
      const failure = new Error('release refused by the network');
      const { store } = withRelease(durableMemoryStore(), () => Promise.reject(failure));
      const { reported, onBackgroundError } = recorder();
      expect(await abortDuringModelCall(store, reason, { onBackgroundError })).toBe(reason);
      await drainEventLoop();
      expect(reported).toEqual([
        { error: failure, context: { operation: 'releaseLease', sessionId: 's', after: 'failed-run' } },
      ]);
    });
  }
});

describe('what the run fails with, and what its release fails with', () => {
  it('one abort reason shared by two runs is changed by neither; each failed release is reported with its session', async () => {
    const inner = durableMemoryStore();
    const failure = new Error('release of s2 failed');
    const store: AgentStore = {
      ...gatedStore(inner).store,
      releaseLease: (id, lease) => (id === 's2' ? Promise.reject(failure) : inner.releaseLease(id, lease)),
    };
    const { reported, onBackgroundError } = recorder();
    const controller = new AbortController();
    const models = [hangingLlm(), hangingLlm()];
    const runs = ['s1', 's2'].map((sessionId, i) =>
      run(agent, {
        store,
        sessionId,
        message: 'go',
        llm: models[i]!.adapter,
        signal: controller.signal,
        onBackgroundError,
      }).catch((error: unknown) => error),
    );
    await Promise.all(models.map((m) => m.sent));
    const shutdown = new Error('shutting down');
    controller.abort(shutdown);
    expect(await Promise.all(runs)).toEqual([shutdown, shutdown]);
    await drainEventLoop();
    expect(Object.hasOwn(shutdown, 'leaseReleaseError')).toBe(false);
    expect(reported).toEqual([
      { error: failure, context: { operation: 'releaseLease', sessionId: 's2', after: 'failed-run' } },
    ]);
    expect((await inner.load('s1'))!.session.lease).toBeNull();
  });

  it("a run failing with one of agentstore's own errors carries the release's failure as leaseReleaseError", async () => {
    const inner = durableMemoryStore();
    const failure = new Error('release refused');
    const corrupt = new CorruptRecordError({ sessionId: 's', seq: null, reason: 'undecodable session' });
    const { store } = withRelease(inner, () => Promise.reject(failure));
    const broken: AgentStore = { ...store, load: () => Promise.reject(corrupt) };
    const { reported, onBackgroundError } = recorder();
    const error = await run(agent, {
      store: broken,
      sessionId: 's',
      message: 'go',
      llm: llm(),
      onBackgroundError,
    }).catch((e: unknown) => e);
    expect(error).toBe(corrupt);
    expect((error as { leaseReleaseError?: unknown }).leaseReleaseError).toBe(failure);
    await drainEventLoop();
    expect(reported).toEqual([]);
  });

  it("one model error shared by two runs carries neither run's release failure: each is reported with its session", async () => {
    const inner = durableMemoryStore();
    const failure = new Error('release of s1 failed');
    const shared = new Error('model client failed to start');
    const store: AgentStore = {
      ...gatedStore(inner).store,
      releaseLease: (id, lease) => (id === 's1' ? Promise.reject(failure) : inner.releaseLease(id, lease)),
    };
    const { reported, onBackgroundError } = recorder();
    const failing: LlmAdapter = { generate: () => Promise.reject(shared) };
    const errors = await Promise.all(
      ['s1', 's2'].map((sessionId) =>
        run(agent, { store, sessionId, message: 'go', llm: failing, onBackgroundError }).catch(
          (e: unknown) => e,
        ),
      ),
    );
    expect(errors).toEqual([shared, shared]);
    await drainEventLoop();
    expect(Object.hasOwn(shared, 'leaseReleaseError')).toBe(false);
    expect(reported).toEqual([
      { error: failure, context: { operation: 'releaseLease', sessionId: 's1', after: 'failed-run' } },
    ]);
  });

  it("the caller's abort reason gets no concurrentError either (write #2 unanswered, the model failing on its own)", async () => {
    const inner = durableMemoryStore();
    const gated = gatedStore(inner);
    const held = gated.hold(2);
    const model: LlmAdapter = {
      generate: ({ messages, signal }) =>
        messages.some((m) => m.role === 'tool')
          ? new Promise((_, reject) =>
              signal.addEventListener('abort', () => reject(new Error('Request was aborted')), {
                once: true,
              }),
            )
          : Promise.resolve({ text: '', toolCalls: callSend.toolCalls }),
    };
    const reason = new Error('caller gave up');
    expect(await abortWhen(held.reached, gated.store, reason, { llm: model })).toBe(reason);
    held.open();
    await drainEventLoop();
    expect(Object.getOwnPropertyNames(reason).sort()).toEqual(['message', 'stack']);
  });

  it('an agentstore error not about this session (a memoised one, shared by runs) carries no release failure', async () => {
    const inner = durableMemoryStore();
    const failure = new Error('release of s1 failed');
    const shared = new InvalidArgumentError({ argument: 'model', reason: 'is misconfigured' });
    const store: AgentStore = {
      ...gatedStore(inner).store,
      releaseLease: (id, lease) => (id === 's1' ? Promise.reject(failure) : inner.releaseLease(id, lease)),
    };
    const { reported, onBackgroundError } = recorder();
    const failing: LlmAdapter = { generate: () => Promise.reject(shared) };
    for (const sessionId of ['s1', 's2']) {
      const error = await run(agent, {
        store,
        sessionId,
        message: 'go',
        llm: failing,
        onBackgroundError,
      }).catch((e: unknown) => e);
      expect(error).toBe(shared);
    }
    await drainEventLoop();
    expect(Object.hasOwn(shared, 'leaseReleaseError')).toBe(false);
    expect(reported).toEqual([
      { error: failure, context: { operation: 'releaseLease', sessionId: 's1', after: 'failed-run' } },
    ]);
  });

  it("a model that fails with another run's LeaseLostError: this run still releases its own lease", async () => {
    const inner = durableMemoryStore();
    const foreign = new LeaseLostError({ sessionId: 'other', holder: 'h', epoch: 3 });
    expect(await failWithModelError(inner, foreign)).toBe(foreign);
    expect((await inner.load('s'))!.session.lease).toBeNull();
  });

  it("a NaN abort reason is the caller's reason like any other: a release that succeeds is no error", async () => {
    const inner = durableMemoryStore();
    const { reported, onBackgroundError } = recorder();
    const error = await abortDuringModelCall(inner, Number.NaN, { onBackgroundError });
    expect(error).toBeNaN();
    await drainEventLoop();
    expect(reported).toEqual([]);
    expect((await inner.load('s'))!.session.lease).toBeNull();
  });

  const shared = new Error('connection pool closed');
  for (const [label, thrown, failure] of [
    [
      'a Proxy whose isExtensible trap throws',
      new Proxy(new Error('model down'), {
        isExtensible: () => {
          throw new TypeError('no');
        },
      }),
      new Error('release refused'),
    ],
    [
      'a Proxy whose defineProperty trap drops the property',
      new Proxy(new Error('model down'), { defineProperty: () => true }),
      new Error('release refused'),
    ],
    ['the very error the release fails with', shared, shared],
  ] as const) {
    it(`a run that fails with ${label}: the release's failure is reported, and the run still fails with it`, async () => {
      const { store } = withRelease(durableMemoryStore(), () => Promise.reject(failure));
      const { reported, onBackgroundError } = recorder();
      expect(await failWithModelError(store, thrown, { onBackgroundError })).toBe(thrown);
      await drainEventLoop();
      expect(reported.map((r) => [r.error, r.context.after])).toEqual([[failure, 'failed-run']]);
    });
  }

  it("an abort reason that is another run's LeaseLostError does not stop this run from releasing its own lease", async () => {
    const inner = durableMemoryStore();
    const { store, releases } = withRelease(inner, (id, lease) => inner.releaseLease(id, lease));
    const foreign = new LeaseLostError({ sessionId: 'other', holder: 'h', epoch: 3 });
    expect(await abortDuringModelCall(store, foreign)).toBe(foreign);
    await drainEventLoop();
    expect(releases()).toBe(1);
    expect((await inner.load('s'))!.session.lease).toBeNull();
  });

  it('a release that answers only after the safe window is followed: its later failure reported once, its success not at all', async () => {
    for (const outcome of ['fails', 'succeeds'] as const) {
      const inner = durableMemoryStore();
      const answer = deferred();
      const failure = new Error('release failed late');
      const { store } = withRelease(inner, (id, lease) =>
        answer.promise.then(() =>
          outcome === 'fails' ? Promise.reject(failure) : inner.releaseLease(id, lease),
        ),
      );
      const { reported, onBackgroundError } = recorder();
      const ttl = 200;
      // The run waits for its release up to the safe window (ttl − ttl/5), then gives up on it.
      expect(await failWithModelError(store, 'rate limited', { leaseTtlMs: ttl, onBackgroundError })).toBe(
        'rate limited',
      );
      answer.resolve();
      await drainEventLoop();
      expect(reported).toEqual(
        outcome === 'fails'
          ? [
              {
                error: failure,
                context: { operation: 'releaseLease', sessionId: 's', after: 'unanswered-release' },
              },
            ]
          : [],
      );
    }
  });
});

describe('an append that may still land', () => {
  /**
   * A store whose `n`-th append answers ECONNRESET at once while the server still executes it
   * (it lands when `land` is called), and whose re-reads fail for good.
   */
  function droppedAnswer(inner: AgentStore, n: number) {
    const lands: Array<() => Promise<unknown>> = [];
    const failed = deferred();
    let appends = 0;
    const { store, releases } = withRelease(inner, (id, lease) => inner.releaseLease(id, lease));
    const dropping: AgentStore = {
      ...store,
      append(id, input) {
        if (++appends !== n) return inner.append(id, input);
        lands.push(() => inner.append(id, input));
        failed.resolve();
        return Promise.reject(Object.assign(new Error('ECONNRESET'), { code: 'ECONNRESET' }));
      },
      load(id, options) {
        if (options?.afterSeq === undefined) return inner.load(id, options);
        return Promise.reject(Object.assign(new Error('client closed'), { retryable: false }));
      },
    };
    return { store: dropping, releases, failed: failed.promise, land: () => lands[0]!() };
  }

  it('after a dropped answer and a failed re-read, the lease is left to lapse, not released under it', async () => {
    for (const aborted of [false, true]) {
      const inner = durableMemoryStore();
      const dropped = droppedAnswer(inner, 2);
      const { reported, onBackgroundError } = recorder();
      const options = { onBackgroundError };
      const error = aborted
        ? await abortWhen(dropped.failed, dropped.store, new Error('caller gave up'), options)
        : await run(agent, {
            store: dropped.store,
            sessionId: 's',
            message: 'go',
            llm: llm(),
            ...options,
          }).catch((e: unknown) => e);
      if (!aborted) expect(error).toMatchObject({ code: 'APPEND_OUTCOME_UNKNOWN' });
      await drainEventLoop();
      expect(dropped.releases()).toBe(0);
      // The append lands late, under a lease nobody freed: the tool's result is kept.
      await dropped.land();
      expect((await inner.load('s'))!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
      expect(reported).toEqual([]);
    }
  });

  it('a releasing final append whose answer was dropped is not followed by a second release', async () => {
    const inner = durableMemoryStore();
    const dropped = droppedAnswer(inner, 3);
    // Aborted once the append has landed after all (its answer dropped, its re-read failing).
    const landed = dropped.failed.then(() => dropped.land()).then(() => undefined);
    await abortWhen(landed, dropped.store, new Error('caller gave up'));
    await drainEventLoop();
    expect(dropped.releases()).toBe(0);
    expect((await inner.load('s'))!.session.lease).toBeNull();
  });
});

/**
 * A store whose `n`-th append is answered ECONNRESET though the server executes it: it lands
 * right after the ledger's first re-read (which sees nothing yet), then `afterLanding` runs.
 */
function landsAfterReread(
  inner: AgentStore,
  n: number,
  afterLanding?: (input: AppendInput) => Promise<unknown>,
) {
  let appends = 0;
  let late: (() => Promise<unknown>) | null = null;
  const store: AgentStore = {
    ...gatedStore(inner).store,
    append(id, input) {
      if (++appends !== n) return inner.append(id, input);
      late = async () => {
        await inner.append(id, input);
        await afterLanding?.(input);
      };
      return Promise.reject(Object.assign(new Error('ECONNRESET'), { code: 'ECONNRESET' }));
    },
    async load(id, options) {
      const answer = await inner.load(id, options);
      if (options?.afterSeq !== undefined && late) {
        const land = late;
        late = null;
        await land();
      }
      return answer;
    },
  };
  return store;
}

describe('an append whose answer was lost or came late', () => {
  it('the final one: the retry, refused as its own release freed the lease, is settled by re-reading; the run completes', async () => {
    const inner = durableMemoryStore();
    // Appends: 1 write #1, 2 its result, 3 the final answer (it carries the release).
    const result = await run(agent, {
      store: landsAfterReread(inner, 3),
      sessionId: 's',
      message: 'go',
      llm: llm(),
    });
    expect(result.status).toBe('complete');
    expect(result.response).toBe('done');
    const stored = (await inner.load('s'))!;
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(stored.session.lease).toBeNull();
  });

  it('write #1, after which another worker took the session: the run stops, its handler never runs', async () => {
    const inner = durableMemoryStore();
    let handlers = 0;
    const counted = defineAgent({
      ...agent,
      tools: {
        send: tool({
          description: 'a side effect',
          input: z.object({}),
          handler: () => {
            handlers += 1;
            return { sent: true };
          },
        }),
      },
    });
    // The lease ends once write #1 landed (an operator, a clock skewed past the margin); B takes over.
    const flaky = landsAfterReread(inner, 1, async (input) => {
      await inner.releaseLease('s', input.lease!);
      await inner.acquireLease('s', {
        holder: 'worker B',
        ttlMs: 60_000,
        init: { agentName: 'background', ownerId: null, tenantId: null, state: null },
      });
    });
    const error = await run(counted, { store: flaky, sessionId: 's', message: 'go', llm: llm() }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'LEASE_LOST' });
    expect(handlers).toBe(0);
    expect((await inner.load('s'))!.session.lease?.holder).toBe('worker B');
  });

  it("a renewal refused because the run's final append already freed the lease is not a lost lease", async () => {
    const inner = durableMemoryStore();
    const renewalRefused = deferred();
    let appends = 0;
    const slowAnswer: AgentStore = {
      ...gatedStore(inner).store,
      async append(id, input) {
        const answer = await inner.append(id, input);
        // The final append (3rd) lands at once; its answer comes only after a renewal was
        // refused (the lease being already free): ordered by the events, not by a sleep.
        if (++appends === 3) await renewalRefused.promise;
        return answer;
      },
      renewLease: (id, input) =>
        inner.renewLease(id, input).catch((error: unknown) => {
          renewalRefused.resolve();
          throw error;
        }),
    };
    // Renewals every 250 ms: the first one after the final append is refused.
    const result = await run(agent, {
      store: slowAnswer,
      sessionId: 's',
      message: 'go',
      llm: llm(),
      leaseTtlMs: 1_000,
    });
    expect(result.status).toBe('complete');
    expect((await inner.load('s'))!.session.lease).toBeNull();
  });
});

describe('an append refused as a lost lease', () => {
  it('aborts the whole run at once: a sibling call of the same step starts no handler after the refusal', async () => {
    const inner = durableMemoryStore();
    const ready = deferred();
    const refused = deferred();
    const ran: string[] = [];
    const twoCalls = defineAgent({
      name: 'background',
      instructions: '',
      tools: {
        fast: tool({
          description: 'a quick effect',
          input: z.object({}),
          handler: () => {
            ran.push('fast');
            return { done: true };
          },
        }),
        slow: tool({
          description: 'an effect whose input takes a while to check',
          input: z.object({}).refine(async () => {
            await ready.promise;
            return true;
          }),
          handler: () => {
            ran.push('slow');
            return { done: true };
          },
        }),
      },
    });
    let appends = 0;
    const store: AgentStore = {
      ...gatedStore(inner).store,
      async append(id, input) {
        const n = ++appends;
        try {
          const answer = await inner.append(id, input);
          // Once write #1 has landed the lease ends (an operator, a clock skewed past the
          // margin) and worker B takes the session.
          if (n === 1) {
            await inner.releaseLease(id, input.lease!);
            await inner.acquireLease(id, {
              holder: 'worker B',
              ttlMs: 60_000,
              init: { agentName: 'background', ownerId: null, tenantId: null, state: null },
            });
          }
          return answer;
        } catch (error) {
          refused.resolve();
          throw error;
        }
      },
    };
    const calls = {
      toolCalls: [
        { id: 'c1', name: 'fast', input: {} },
        { id: 'c2', name: 'slow', input: {} },
      ],
    };
    const running = run(twoCalls, {
      store,
      sessionId: 's',
      message: 'go',
      llm: scriptedLlm([calls, { text: 'done' }]),
    }).catch((e: unknown) => e);
    // The fast call's result is refused (B holds the lease); only then is the slow call ready.
    await refused.promise;
    await drainEventLoop();
    ready.resolve();
    expect(await running).toMatchObject({ code: 'LEASE_LOST' });
    await drainEventLoop();
    expect(ran).toEqual(['fast']);
  });
});

describe('an acquire the caller abandoned', () => {
  /** A store whose acquires wait for `settle` once sent. */
  function lateAcquire(inner: AgentStore, failure: Error) {
    const settle = deferred<'grant' | 'fail'>();
    const sent = deferred();
    const { store } = withRelease(inner, () => Promise.reject(failure));
    const late: AgentStore = {
      ...store,
      acquireLease(id, options) {
        sent.resolve();
        return settle.promise.then((how) =>
          how === 'grant'
            ? inner.acquireLease(id, options)
            : Promise.reject(new Error('ECONNRESET: answer lost')),
        );
      },
    };
    return { store: late, settle, sent: sent.promise };
  }

  async function abandonAcquire(store: AgentStore, sent: Promise<void>, options: object) {
    const reason = new Error('caller gave up');
    expect(await abortWhen(sent, store, reason, options)).toBe(reason);
  }

  it('granted after all: its failed release is reported', async () => {
    const failure = new Error('release refused by the network');
    const { store, settle, sent } = lateAcquire(durableMemoryStore(), failure);
    const { reported, onBackgroundError } = recorder();
    await abandonAcquire(store, sent, { onBackgroundError });
    settle.resolve('grant');
    await drainEventLoop();
    expect(reported).toEqual([
      { error: failure, context: { operation: 'releaseLease', sessionId: 's', after: 'abandoned-acquire' } },
    ]);
  });

  it('failed without a definite answer (it may have been granted): reported as such', async () => {
    const { store, settle, sent } = lateAcquire(durableMemoryStore(), new Error('unused'));
    const { reported, onBackgroundError } = recorder();
    await abandonAcquire(store, sent, { onBackgroundError });
    settle.resolve('fail');
    await drainEventLoop();
    expect(reported.map((r) => [(r.error as Error).message, r.context])).toEqual([
      ['ECONNRESET: answer lost', { operation: 'acquireLease', sessionId: 's', after: 'abandoned-acquire' }],
    ]);
  });

  it('answered with an unexpected reply or an undecodable session after the grant: reported as may have been granted', async () => {
    for (const failure of [
      new UnexpectedReplyError({ store: 'custom', operation: 'acquireLease', reply: 'OK?', sessionId: 's' }),
      new CorruptRecordError({ sessionId: 's', seq: null, reason: 'undecodable session' }),
    ]) {
      const inner = durableMemoryStore();
      const settle = deferred();
      const sent = deferred();
      const store: AgentStore = {
        ...gatedStore(inner).store,
        acquireLease(id, options) {
          sent.resolve();
          return settle.promise
            .then(() => inner.acquireLease(id, options))
            .then(() => Promise.reject(failure));
        },
      };
      const { reported, onBackgroundError } = recorder();
      await abandonAcquire(store, sent.promise, { onBackgroundError });
      settle.resolve();
      await drainEventLoop();
      expect(reported).toEqual([
        {
          error: failure,
          context: { operation: 'acquireLease', sessionId: 's', after: 'abandoned-acquire' },
        },
      ]);
    }
  });

  it('refused by the store (a typed, definite answer): nothing to report', async () => {
    const inner = durableMemoryStore();
    await inner.acquireLease('s', {
      holder: 'another worker',
      ttlMs: 60_000,
      init: { agentName: 'background', ownerId: null, tenantId: null, state: null },
    });
    let refusals = 0;
    const refused = deferred();
    const store: AgentStore = {
      ...gatedStore(inner).store,
      async acquireLease(id, options) {
        try {
          return await inner.acquireLease(id, options);
        } catch (error) {
          refusals += 1;
          refused.resolve();
          throw error;
        }
      },
    };
    const { reported, onBackgroundError } = recorder();
    // Waiting on the busy session, it polls; aborted between two refusals.
    await abandonAcquire(store, refused.promise, { onBackgroundError, leaseWaitMs: 60_000 });
    await drainEventLoop();
    expect(refusals).toBeGreaterThan(0);
    expect(reported).toEqual([]);
    await expect(run(agent, { store: inner, sessionId: 's', llm: llm() })).rejects.toBeInstanceOf(
      SessionBusyError,
    );
  });
});

describe('the onBackgroundError option', () => {
  it('not a function: refused before the store or the model is called', async () => {
    const calls: string[] = [];
    const inner = durableMemoryStore();
    const watched: AgentStore = {
      ...gatedStore(inner).store,
      acquireLease(id, options) {
        calls.push('acquireLease');
        return inner.acquireLease(id, options);
      },
    };
    const error = await run(agent, {
      store: watched,
      sessionId: 's',
      message: 'go',
      llm: {
        generate: () => {
          calls.push('model');
          return Promise.resolve({ text: 'x', toolCalls: [] });
        },
      },
      onBackgroundError: 'log it' as never,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).message).toContain('onBackgroundError');
    expect(calls).toEqual([]);
  });
});

describe('a renewal that throws instead of rejecting', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  for (const [label, renewLease] of [
    [
      'throws',
      () => {
        throw new Error('pool exhausted');
      },
    ],
    ['answers a plain value', () => ({ expiresAt: 'soon' }) as never],
  ] as const) {
    it(`${label}: never an exception from the keeper's timer; it counts as a failed or an answered renewal`, async () => {
      vi.useFakeTimers();
      const ttl = 1_000;
      const inner = durableMemoryStore();
      const store: AgentStore = {
        ...gatedStore(inner).store,
        renewLease: renewLease as AgentStore['renewLease'],
      };
      const lost: unknown[] = [];
      const keeper = keepLeaseAlive({
        store,
        sessionId: 's',
        lease: { holder: 'h', epoch: 1 },
        ttlMs: ttl,
        sentAt: Date.now(),
        now: () => Date.now(),
        onLost: (error) => lost.push(error),
      });
      // Renewals are sent every ttl/4; each one's failure is a passing fault until the deadline.
      await vi.advanceTimersByTimeAsync(ttl / 2);
      expect(() => keeper.assertHeld()).not.toThrow();
      await vi.advanceTimersByTimeAsync(ttl);
      if (label === 'throws') {
        expect(lost).toHaveLength(1);
        expect((lost[0] as Error & { cause?: Error }).cause?.message).toBe('pool exhausted');
      } else {
        expect(lost).toEqual([]);
      }
      keeper.stop();
    });
  }
});
