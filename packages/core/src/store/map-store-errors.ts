import type { AgentStore } from './contract.ts';

/**
 * For adapter authors: the same store with every method's failure passed through `map` (which
 * returns the error to throw: a typed one for a backend error it recognises, else the original).
 * One place per adapter turns raw driver errors (a missing table, a pooler's prepared-statement
 * clash) into errors that say what to do. Getters and other properties are kept as they are.
 */
export function mapStoreErrors<S extends AgentStore>(store: S, map: (error: unknown) => unknown): S {
  const mapped = Object.create(Object.getPrototypeOf(store)) as S;
  for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(store))) {
    const value = descriptor.value as unknown;
    if (typeof value === 'function' && key !== 'close') {
      const method = value as (...args: unknown[]) => unknown;
      descriptor.value = async (...args: unknown[]) => {
        try {
          return await method.apply(store, args);
        } catch (error) {
          throw map(error);
        }
      };
    }
    Object.defineProperty(mapped, key, descriptor);
  }
  return mapped;
}
