import type { AgentStore } from '../store/contract.ts';

/** A simulated process death. Once thrown, the faulty store refuses every later call. */
export class SimulatedCrashError extends Error {
  readonly code = 'SIMULATED_CRASH' as const;
  /** A dead process retries nothing: the run loop gives up at once instead of waiting. */
  readonly retryable = false;
  constructor(where: string) {
    super(`simulated crash ${where}`);
    this.name = 'SimulatedCrashError';
  }
}

/**
 * True when `error`, or any error in its `cause` chain, is a simulated crash: a run that hit
 * one may surface it wrapped (e.g. as the cause of an `AppendOutcomeUnknownError`).
 */
export function isSimulatedCrash(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    if (e instanceof SimulatedCrashError) return true;
  }
  return false;
}

/** A lost acknowledgement: the write may have committed, the caller cannot tell. */
export class SimulatedAckLostError extends Error {
  readonly code = 'SIMULATED_ACK_LOST' as const;
  constructor(where: string) {
    super(`simulated connection drop ${where}`);
    this.name = 'SimulatedAckLostError';
  }
}

export type FaultableOp = 'append' | 'acquireLease' | 'renewLease' | 'releaseLease' | 'load';

export interface FaultPlan {
  op: FaultableOp;
  /** 1-based: the fault hits the `call`-th call of `op` through this wrapper. */
  call: number;
  /** `before`: the call is not performed. `after`: it is performed, then the fault hits. */
  when: 'before' | 'after';
  /** `crash`: the process "dies" (this wrapper refuses all later calls). `ack-lost`: one error, then normal. */
  effect: 'crash' | 'ack-lost';
}

export interface FaultyStore extends AgentStore {
  /** True once the fault has fired. */
  readonly tripped: boolean;
  /** Calls seen per operation. */
  readonly calls: Readonly<Record<FaultableOp, number>>;
}

const OPS: FaultableOp[] = ['append', 'acquireLease', 'renewLease', 'releaseLease', 'load'];

/** Wraps a store so that one chosen call fails the way a crash or a dropped connection would. */
export function faultyStore(store: AgentStore, plan: FaultPlan): FaultyStore {
  const calls = Object.fromEntries(OPS.map((op) => [op, 0])) as Record<FaultableOp, number>;
  let tripped = false;
  let dead = false;

  const wrap = <Op extends FaultableOp>(op: Op) =>
    (async (...args: unknown[]) => {
      if (dead) throw new SimulatedCrashError(`(process already dead) at ${op}`);
      calls[op] += 1;
      const hit = !tripped && op === plan.op && calls[op] === plan.call;
      const where = `${plan.when} ${op} #${calls[op]}`;
      const fire = () => {
        tripped = true;
        if (plan.effect === 'crash') {
          dead = true;
          throw new SimulatedCrashError(where);
        }
        throw new SimulatedAckLostError(where);
      };
      if (hit && plan.when === 'before') fire();
      const result = await (store[op] as (...a: unknown[]) => Promise<unknown>)(...args);
      if (hit) fire();
      return result;
    }) as AgentStore[Op];

  return {
    durable: store.durable,
    limits: store.limits,
    load: wrap('load'),
    append: wrap('append'),
    acquireLease: wrap('acquireLease'),
    renewLease: wrap('renewLease'),
    releaseLease: wrap('releaseLease'),
    listSessions: (input) => store.listSessions(input),
    deleteSession: (id) => store.deleteSession(id),
    deleteIdleSessions: (input) => store.deleteIdleSessions(input),
    close: () => store.close(),
    get tripped() {
      return tripped;
    },
    get calls() {
      return calls;
    },
  };
}

/**
 * Throws on the n-th `append` without performing it
 * (n = 2 is the first tool-result write), then behaves like a dead process.
 */
export function crashAfterToolResults(store: AgentStore, n = 2): FaultyStore {
  return faultyStore(store, { op: 'append', call: n, when: 'before', effect: 'crash' });
}

/** What a partitioned holder's renewals do: answer normally, never answer, or fail at once. */
export type RenewFault = 'none' | 'hang' | 'fail';

export interface RenewFaultStore extends AgentStore {
  /** Applies to every later `renewLease` through this wrapper; change it at any time. */
  renewFault: RenewFault;
  /** `renewLease` calls seen, whatever their fate. */
  readonly renewCalls: number;
}

/** A dropped connection's error, as a driver would raise it: not an agentstore error. */
export class SimulatedNetworkError extends Error {
  readonly code = 'SIMULATED_NETWORK' as const;
  constructor(where: string) {
    super(`simulated network failure at ${where}`);
    this.name = 'SimulatedNetworkError';
  }
}

/**
 * Wraps a store so that this client's lease renewals hang (a partition: the request or its
 * answer never arrives) or fail, while every other call still reaches the store — the worker
 * that still reaches the payment API but no longer the database.
 */
export function renewFaults(store: AgentStore, initial: RenewFault = 'none'): RenewFaultStore {
  let renewCalls = 0;
  const wrapper: RenewFaultStore = {
    durable: store.durable,
    limits: store.limits,
    ...(store.maxClockSkewMs !== undefined ? { maxClockSkewMs: store.maxClockSkewMs } : {}),
    renewFault: initial,
    get renewCalls() {
      return renewCalls;
    },
    load: (id, options) => store.load(id, options),
    append: (id, input) => store.append(id, input),
    acquireLease: (id, input) => store.acquireLease(id, input),
    renewLease: (id, input) => {
      renewCalls += 1;
      if (wrapper.renewFault === 'hang') return new Promise(() => {});
      if (wrapper.renewFault === 'fail') {
        return Promise.reject(new SimulatedNetworkError(`renewLease #${renewCalls}`));
      }
      return store.renewLease(id, input);
    },
    releaseLease: (id, input) => store.releaseLease(id, input),
    listSessions: (input) => store.listSessions(input),
    deleteSession: (id) => store.deleteSession(id),
    deleteIdleSessions: (input) => store.deleteIdleSessions(input),
    close: () => store.close(),
  };
  return wrapper;
}
