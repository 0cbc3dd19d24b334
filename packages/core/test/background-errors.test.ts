import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  type AgentStore,
  type BackgroundErrorContext,
  defineAgent,
  InvalidArgumentError,
  run,
  tool,
} from '../src/index.ts';
import { durableMemoryStore, scriptedLlm } from '../src/testing/index.ts';
import { drainEventLoop, gatedStore } from './pipeline-fixtures.ts';

// After the caller aborts, run() frees the lease once an abandoned acquire or append settles.
// Nobody awaits that release any more, so its failure must reach onBackgroundError (default:
// console.warn), never vanish: the session stays busy until the lease expires.

const agent = defineAgent({
  name: 'background',
  instructions: '',
  tools: {
    send: tool({ description: 'a side effect', input: z.object({}), handler: () => ({ sent: true }) }),
  },
});

const llm = () => scriptedLlm([{ toolCalls: [{ id: 'c1', name: 'send', input: {} }] }, { text: 'done' }]);

type Reported = { error: unknown; context: BackgroundErrorContext };

/** An onBackgroundError that keeps what it is handed. */
function recorder() {
  const reported: Reported[] = [];
  const onBackgroundError = (error: unknown, context: BackgroundErrorContext) => {
    reported.push({ error, context });
  };
  return { reported, onBackgroundError };
}

/** A store whose releases fail with `failure` (rejecting, or throwing when `throws`). */
function failingReleases(inner: AgentStore, failure: Error, throws = false) {
  const gated = gatedStore(inner);
  const releases: string[] = [];
  const store: AgentStore = {
    ...gated.store,
    releaseLease(id, lease) {
      releases.push(`${id}@${lease.epoch}`);
      if (throws) throw failure;
      return Promise.reject(failure);
    },
  };
  return { store, gated, releases };
}

/** Aborts a run while its second append (write #2 of step 1) is unanswered, then lets it land. */
async function abandonAnAppend(store: AgentStore, gated: ReturnType<typeof gatedStore>, extra: object) {
  const held = gated.hold(2);
  const controller = new AbortController();
  const running = run(agent, {
    store,
    sessionId: 's',
    message: 'go',
    llm: llm(),
    signal: controller.signal,
    ...extra,
  }).catch((error: unknown) => error);
  await held.reached;
  const reason = new Error('caller gave up');
  controller.abort(reason);
  expect(await running).toBe(reason);
  held.open();
  await drainEventLoop();
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a release nobody awaits any more', () => {
  it('after an abandoned append: its failure reaches onBackgroundError with the session and the cause', async () => {
    const failure = new Error('connection reset during release');
    const { store, gated, releases } = failingReleases(durableMemoryStore(), failure);
    const { reported, onBackgroundError } = recorder();
    await abandonAnAppend(store, gated, { onBackgroundError });
    expect(releases).toEqual(['s@1']);
    expect(reported).toEqual([
      { error: failure, context: { operation: 'releaseLease', sessionId: 's', after: 'abandoned-append' } },
    ]);
  });

  it('a store whose releaseLease throws instead of rejecting is reported the same way', async () => {
    const failure = new Error('thrown, not rejected');
    const { store, gated } = failingReleases(durableMemoryStore(), failure, true);
    const { reported, onBackgroundError } = recorder();
    await abandonAnAppend(store, gated, { onBackgroundError });
    expect(reported.map((r) => [r.error, r.context.after])).toEqual([[failure, 'abandoned-append']]);
  });

  it('by default it is written with console.warn, naming the session', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const failure = new Error('server gone');
    const { store, gated } = failingReleases(durableMemoryStore(), failure);
    await abandonAnAppend(store, gated, {});
    expect(warn).toHaveBeenCalledTimes(1);
    const [text, error] = warn.mock.calls[0]!;
    expect(text).toContain('"s"');
    expect(text).toContain('the session stays busy until the lease expires');
    expect(error).toBe(failure);
  });

  it('a release that succeeds reports nothing, and frees the session at once', async () => {
    const inner = durableMemoryStore();
    const gated = gatedStore(inner);
    const { reported, onBackgroundError } = recorder();
    await abandonAnAppend(gated.store, gated, { onBackgroundError });
    expect(reported).toEqual([]);
    const next = await run(agent, { store: inner, sessionId: 's', llm: llm() });
    expect(next.status).toBe('complete');
  });

  it('after an acquire granted once the caller had gone: its failed release is reported', async () => {
    const inner = durableMemoryStore();
    const failure = new Error('release refused by the network');
    const { store } = failingReleases(inner, failure);
    let grant!: () => void;
    const granted = new Promise<void>((resolve) => {
      grant = resolve;
    });
    let sent!: () => void;
    const acquireSent = new Promise<void>((resolve) => {
      sent = resolve;
    });
    const lateAcquire: AgentStore = {
      ...store,
      acquireLease(id, options) {
        sent();
        return granted.then(() => inner.acquireLease(id, options));
      },
    };
    const { reported, onBackgroundError } = recorder();
    const controller = new AbortController();
    const running = run(agent, {
      store: lateAcquire,
      sessionId: 's',
      message: 'go',
      llm: llm(),
      signal: controller.signal,
      onBackgroundError,
    }).catch((error: unknown) => error);
    await acquireSent;
    const reason = new Error('caller gave up');
    controller.abort(reason);
    expect(await running).toBe(reason);
    grant();
    await drainEventLoop();
    expect(reported).toEqual([
      { error: failure, context: { operation: 'releaseLease', sessionId: 's', after: 'abandoned-acquire' } },
    ]);
  });

  it('onBackgroundError that is not a function is refused before the store or the model is called', async () => {
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
          return Promise.resolve({ text: 'x' });
        },
      },
      onBackgroundError: 'log it' as never,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).message).toContain('onBackgroundError');
    expect(calls).toEqual([]);
  });
});
