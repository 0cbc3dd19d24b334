import type { AgentStore, LlmAdapter, LlmMessage, LlmResponse } from '../src/index.ts';

/** A point a test controls: the code under test waits at it until the test opens or fails it. */
export interface Gate {
  /** Resolves once the code under test has reached the gate. */
  readonly reached: Promise<void>;
  open(): void;
  /** The waiting call fails with `error` instead of going ahead. */
  fail(error: unknown): void;
}

function gate(): Gate & { wait(): Promise<void>; arrive(): void } {
  let arrive!: () => void;
  let open!: () => void;
  let fail!: (error: unknown) => void;
  const reached = new Promise<void>((resolve) => {
    arrive = resolve;
  });
  const opened = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { reached, open, fail, arrive, wait: () => opened };
}

/**
 * Wraps a store so that chosen appends wait on a gate, and logs when each append starts and
 * lands: the order of events shows what overlapped, without timing anything.
 */
export function gatedStore(inner: AgentStore) {
  const log: string[] = [];
  const gates = new Map<number, ReturnType<typeof gate>>();
  let appends = 0;
  const store: AgentStore = {
    durable: inner.durable,
    limits: inner.limits,
    load: (id, options) => inner.load(id, options),
    async append(id, input) {
      const n = ++appends;
      log.push(`append ${n} start`);
      const held = gates.get(n);
      if (held) {
        held.arrive();
        try {
          await held.wait();
        } catch (error) {
          log.push(`append ${n} failed`);
          throw error;
        }
      }
      const result = await inner.append(id, input);
      log.push(`append ${n} landed`);
      return result;
    },
    acquireLease: (id, options) => inner.acquireLease(id, options),
    renewLease: (id, input) => inner.renewLease(id, input),
    releaseLease: (id, lease) => inner.releaseLease(id, lease),
    listSessions: (input) => inner.listSessions(input),
    deleteSession: (id) => inner.deleteSession(id),
    deleteIdleSessions: (input) => inner.deleteIdleSessions(input),
    close: () => inner.close(),
  };
  return {
    store,
    log,
    /** Holds the `n`-th append (1-based) at a gate before it reaches the store. */
    hold(n: number): Gate {
      const held = gate();
      gates.set(n, held);
      return held;
    },
  };
}

export type ModelHook = (
  call: number,
  request: { messages: LlmMessage[]; signal: AbortSignal },
) => Promise<void> | void;

/**
 * A model answering `steps[k]` where k is the number of assistant messages it is sent (like
 * `scriptedLlm`), logging each call into `log` and letting `hook` hold or fail a call.
 */
export function loggedLlm(steps: Partial<LlmResponse>[], log: string[], hook?: ModelHook) {
  const requests: LlmMessage[][] = [];
  const signals: AbortSignal[] = [];
  let calls = 0;
  const llm: LlmAdapter = {
    async generate({ messages, signal }) {
      const call = ++calls;
      requests.push(messages);
      signals.push(signal);
      log.push(`model ${call} sent`);
      await hook?.(call, { messages, signal });
      signal.throwIfAborted();
      const step = steps[messages.filter((m) => m.role === 'assistant').length];
      if (!step) throw new Error(`loggedLlm: no step for request ${call}`);
      log.push(`model ${call} answered`);
      return { text: step.text ?? '', toolCalls: step.toolCalls ?? [] };
    },
  };
  return { llm, requests, signals };
}

/** Resolves after the event loop has run `turns` times: lets every ready promise settle. */
export async function drainEventLoop(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}
