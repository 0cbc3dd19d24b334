/**
 * What a store under test offers the conformance kit, the bench and the torture runner: a store
 * factory and the raw-driver capabilities (raw reader, corrupter, floor). Lives in core so that
 * adapters can publish their test targets without depending on the kit.
 */
import type { MessageRecord } from '../records.ts';
import type { AgentStore } from '../store.ts';

/** A session row as the backend holds it, read without going through the store's decode path. */
export interface RawSessionRow {
  id: string;
  headSeq: number;
  ownerId: string | null;
  tenantId: string | null;
  leaseHolder: string | null;
  /** The last epoch granted; kept after release. */
  leaseEpoch: number;
}

/** A message row as the backend holds it. `content` is the message content, decoded only as far as needed to compare it. */
export interface RawMessageRow {
  seq: number;
  id: string;
  role: string;
  content: string;
}

/**
 * Reads the backend directly (its own SQL, Redis commands, Query…), so a bad write cannot hide
 * behind a matching bad read in the adapter under test.
 */
export interface RawReader {
  session(sessionId: string): Promise<RawSessionRow | null>;
  /** Every stored message of the session, ascending by seq. */
  messages(sessionId: string): Promise<RawMessageRow[]>;
}

/** The cheapest correct hand-written atomic append on the same backend: the perf gate's floor. */
export interface RawAppendFloor {
  /**
   * Appends `messages` (seqs already assigned, starting at `expectedSeq + 1`) to a session that
   * exists, guarded by head seq, in one atomic write — as a user would write it with the raw driver.
   */
  append(sessionId: string, expectedSeq: number, messages: MessageRecord[]): Promise<void>;
}

/** What an adapter can offer the kit beyond the contract. Specs that need one register only when it is given. */
export interface StoreCapabilities {
  raw?: RawReader;
  /** Overwrites the stored message at `seq` with bytes the store cannot decode. */
  corrupt?: (sessionId: string, seq: number) => Promise<void>;
  floor?: RawAppendFloor;
  /**
   * Round trips to the backend so far, counted at the driver, by every store this target created
   * and by its floor. The perf gate takes differences around single calls, so it can hold a store
   * to the floor's count per append without timing anything.
   */
  roundTrips?: () => number;
}

export interface ConformanceTarget {
  /** Shown in test names. */
  name: string;
  /**
   * Returns a store on the backend under test. Called once per spec file; stores may share one
   * database, since every spec uses fresh random session ids and tenant ids.
   */
  createStore: () => Promise<AgentStore> | AgentStore;
  /** Defaults to `store.close()`. */
  destroyStore?: (store: AgentStore) => Promise<void> | void;
  capabilities?: StoreCapabilities;
  /**
   * Whether the store promises durability (`store.durable`). Defaults to true; set false only for
   * a store like `memoryStore()`, so the checks that need a durable store (crash matrix, the
   * run-loop perf gate) are not registered. The kit checks that `store.durable` agrees.
   */
  durable?: boolean;
  /** Perf gate: fail only beyond this ratio to the raw floor (default 3, generous so noise cannot flake it). */
  maxFloorRatio?: number;
}

/**
 * A target on a live backend that the caller must close: what an adapter's `./testing` entry
 * returns, so the conformance kit, the bench and the torture runner can open any store the same way.
 */
export interface OpenTestTarget extends ConformanceTarget {
  /** What the target runs on (driver and server versions), for reports. */
  describe(): Promise<string>;
  /**
   * The options that open this same target — same database, schema, prefix or table — from
   * another process, passed to the same `…TestTarget` factory (JSON-serialisable).
   */
  readonly reopen: Record<string, string | boolean>;
  /** Releases the connections the target opened (not the server). */
  close(): Promise<void>;
}
