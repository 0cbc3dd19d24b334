import { InvalidArgumentError } from '../errors.ts';
import type {
  AcquireLeaseInput,
  AgentStore,
  AppendInput,
  LeaseToken,
  ListSessionsInput,
  LoadOptions,
} from './contract.ts';
import { snapshotInput } from './json-boundary.ts';
import { type RetentionRequest, validateRetentionInput } from './retention.ts';
import {
  validateAcquireLeaseInput,
  validateAppendInput,
  validateListSessionsInput,
  validateLoadOptions,
  validateReleaseLeaseInput,
  validateRenewLeaseInput,
  validateSessionId,
} from './validation.ts';

/** The methods `defineStore` validates; each receives input core has already checked and copied. */
export interface StoreImplementation {
  readonly durable: boolean;
  readonly durabilityProblem?: AgentStore['durabilityProblem'];
  readonly limits: AgentStore['limits'];
  readonly maxClockSkewMs?: number;
  /** `afterSeq` is always present (0 when the caller gave none). */
  load(sessionId: string, options: Required<LoadOptions>): ReturnType<AgentStore['load']>;
  /**
   * `messageJson[i]` is `JSON.stringify(input.messages[i])`, the text the size limits measured:
   * a store that keeps messages as JSON stores it instead of serialising them again.
   */
  append(
    sessionId: string,
    input: AppendInput,
    messageJson: readonly string[],
  ): ReturnType<AgentStore['append']>;
  acquireLease(sessionId: string, input: AcquireLeaseInput): ReturnType<AgentStore['acquireLease']>;
  renewLease(sessionId: string, input: LeaseToken & { ttlMs: number }): ReturnType<AgentStore['renewLease']>;
  releaseLease(sessionId: string, input: LeaseToken): ReturnType<AgentStore['releaseLease']>;
  listSessions(input: ListSessionsInput): ReturnType<AgentStore['listSessions']>;
  deleteSession(sessionId: string): ReturnType<AgentStore['deleteSession']>;
  /** The sweep request normalised: `idleBefore` as `toISOString()` text and in ms. */
  deleteIdleSessions(request: RetentionRequest): ReturnType<AgentStore['deleteIdleSessions']>;
  close(): Promise<void>;
}

type ContractMethod = Exclude<
  keyof StoreImplementation,
  'durable' | 'durabilityProblem' | 'limits' | 'maxClockSkewMs'
>;

/** The store `defineStore` returns: the contract, plus whatever else the implementation carries. */
export type DefinedStore<I extends StoreImplementation> = Omit<I, ContractMethod> & AgentStore;

export interface DefineStoreOptions {
  /**
   * Turns a failure of the implementation (never a validation error) into the error to throw: a
   * typed one for a backend error it recognises, else the original. Applied to every method but
   * `close`, extra methods (e.g. `migrate`) included.
   */
  mapError?: (error: unknown) => unknown;
}

/** An options or input argument must be an object before anything reads its fields. */
function requireObject(value: unknown, argument: string): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError({ argument, reason: 'must be an object' });
  }
}

type Validate = (args: unknown[], impl: StoreImplementation) => unknown[];

/**
 * Per method: copy the caller's objects once (getters, Proxies and `toJSON` are read exactly once,
 * so what was checked is what gets stored), check the copy, hand the implementation trusted input.
 */
const VALIDATE: Record<ContractMethod, Validate> = {
  load([sessionId, options]) {
    validateSessionId(sessionId);
    if (options === undefined) return [sessionId, { afterSeq: 0 }];
    requireObject(options, 'options');
    const copy = snapshotInput(options) as LoadOptions;
    validateLoadOptions(copy);
    return [sessionId, { afterSeq: copy.afterSeq ?? 0 }];
  },
  append([sessionId, given], impl) {
    const input = snapshotInput(given) as AppendInput;
    const messageJson = validateAppendInput(sessionId as string, input, impl.limits);
    return [sessionId, input, messageJson];
  },
  acquireLease([sessionId, given]) {
    validateSessionId(sessionId);
    const input = snapshotInput(given);
    validateAcquireLeaseInput(sessionId, input);
    return [sessionId, input];
  },
  renewLease([sessionId, given]) {
    validateSessionId(sessionId);
    requireObject(given, 'input');
    const input = snapshotInput(given);
    validateRenewLeaseInput(sessionId, input);
    return [sessionId, input];
  },
  releaseLease([sessionId, given]) {
    validateSessionId(sessionId);
    requireObject(given, 'input');
    const input = snapshotInput(given);
    validateReleaseLeaseInput(sessionId, input);
    return [sessionId, input];
  },
  listSessions([given]) {
    const input = snapshotInput(given);
    validateListSessionsInput(input);
    return [input];
  },
  deleteSession([sessionId]) {
    validateSessionId(sessionId);
    return [sessionId];
  },
  deleteIdleSessions([given]) {
    requireObject(given, 'input');
    return [validateRetentionInput(snapshotInput(given) as never)];
  },
  close: () => [],
};

/**
 * The one validation boundary every store's input passes: wraps a store implementation so each
 * contract method first copies and checks its arguments with core's validators (a typed
 * `InvalidArgumentError` / `PayloadTooLargeError` naming what was wrong, before any I/O), then
 * calls the implementation with trusted input, and maps the implementation's failures through
 * `mapError`. Getters (e.g. a `durable` that a background check updates) and extra properties are
 * kept as they are. A store written without it still works with `run()`; it must then check its
 * own input (the conformance kit sends it hostile values).
 */
export function defineStore<I extends StoreImplementation>(
  impl: I,
  options: DefineStoreOptions = {},
): DefinedStore<I> {
  const { mapError } = options;
  const store = Object.create(Object.getPrototypeOf(impl)) as DefinedStore<I>;
  for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(impl))) {
    const method = descriptor.value as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (typeof method === 'function') {
      const validate = Object.hasOwn(VALIDATE, key) ? VALIDATE[key as ContractMethod] : null;
      const map = key === 'close' ? undefined : mapError;
      descriptor.value = async (...args: unknown[]) => {
        const trusted = validate ? validate(args, impl) : args;
        if (!map) return method.apply(impl, trusted);
        try {
          return await method.apply(impl, trusted);
        } catch (error) {
          throw map(error);
        }
      };
    }
    Object.defineProperty(store, key, descriptor);
  }
  return store;
}
