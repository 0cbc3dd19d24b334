import type { AgentStore } from '@agentstore/core';

/** A store over an empty namespace, and a raw dump of what it wrote (generator only). */
export interface CapturedStore {
  store: AgentStore;
  /** Writes the namespace's raw contents into `dir`, read with the backend's own driver, not the store. */
  dump(dir: string): Promise<void>;
  close(): Promise<void>;
}

/** The store of the code under test over a fresh namespace restored from a dump. */
export interface RestoredStore {
  store: AgentStore;
  close(): Promise<void>;
}

/** One backend on a running real server: captures and restores corpora. */
export interface CorpusBackend {
  capture(): Promise<CapturedStore>;
  /** Restores the dump in `dir` byte for byte into a fresh namespace, migrates it, opens a store. */
  restore(dir: string): Promise<RestoredStore>;
  stop(): Promise<void>;
}

/** A short random suffix for fresh namespaces. */
export const freshName = () => crypto.randomUUID().replaceAll('-', '').slice(0, 12);

/** The lease-skew DynamoDB stores declare here: one machine, one clock. */
export const MAX_CLOCK_SKEW_MS = 1_000;
