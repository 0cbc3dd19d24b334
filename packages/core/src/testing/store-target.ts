/**
 * What a store under test offers the conformance kit, the bench and the torture runner: a store
 * factory and the raw-driver capabilities (raw reader, corrupter, floor). Lives in core so that
 * adapters can publish their test targets without depending on the kit.
 */
import type { MessageRecord } from '../records.ts';
import type { AgentStore } from '../store/contract.ts';

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
  /**
   * Messages in the long-session check (default 20,000). A backend whose every call is slow (an
   * emulator behind a proxy) may declare fewer; the check still needs thousands to mean anything.
   */
  longSessionMessages?: number;
  /** Perf gate: fail only beyond this ratio to the raw floor (default 3, generous so noise cannot flake it). */
  maxFloorRatio?: number;
  /**
   * The module (a file URL or absolute path) whose default export opens this target: the kit's
   * process tier and `agentstore-torture` import it in child processes. The CLIs set it to the
   * file they were given; an adapter's `./testing` entry sets it to itself.
   */
  module?: string;
  /**
   * Options that open this same target — same database, schema, prefix or table — from another
   * process, passed to `module`'s default export when that is a function (JSON values only).
   * Absent: the default export is called with no options (it must then find the same data on its
   * own, e.g. from a fixed connection string).
   */
  reopen?: Readonly<Record<string, string | number | boolean | null>>;
  /**
   * Whether several processes may use the backend at the same time (default true). False skips
   * the process tier and torture's racing workers (e.g. D1 under miniflare, where every process
   * runs its own engine on one file).
   */
  multiProcess?: boolean;
}

/**
 * A target on a live backend that the caller must close: what an adapter's `./testing` entry
 * default-exports (`(options?) => Promise<OpenTestTarget>`; without options it starts a throwaway
 * backend, with a target's `reopen` it opens the same data), and the one shape the conformance
 * kit, `agentstore-torture` and `agentstore-bench` read. Tools never ask which store it is: what
 * differs between stores is a field here.
 */
export interface OpenTestTarget extends ConformanceTarget {
  /** What the target runs on (driver and server versions), for reports. */
  describe(): Promise<string>;
  /** Releases the connections the target opened, and stops any server it started. */
  close(): Promise<void>;
  /** Crash-restarts the server (torture's fault trials); absent where there is none this process owns. */
  restart?(): Promise<void>;
  /**
   * Round trips to the backend (driver calls: queries, commands, requests, statements) made so
   * far by one store this target created — counted on that very instance — or by the floor in
   * its capabilities. Absent: the tools count `store.*` calls instead, and say so.
   */
  roundTrips?(subject: AgentStore | RawAppendFloor): number;
  /** What one counted round trip is, in words, for reports (e.g. "pg queries"). */
  roundTripUnit?: string;
  /** Where the backend keeps files this target made; absent for servers. */
  dataDir?: string;
  /** Caveats a report must print beside this target's numbers (e.g. D1 timed through miniflare's proxy). */
  notes?: readonly string[];
  /**
   * The backend's durability settings as the backend itself reports them (e.g. SQLite
   * journal_mode and synchronous read from the store's connection, Postgres fsync and
   * synchronous_commit from `SHOW`), for reports: a time means little without them. `dataDir`:
   * where the backend keeps its files, when this machine can see them (the bench records that
   * directory's file system).
   */
  durabilitySettings?(): Promise<DurabilitySettings>;
}

/** What `OpenTestTarget.durabilitySettings` reports. */
export interface DurabilitySettings {
  /** Setting name → value, as the backend names and reports them. */
  settings: Readonly<Record<string, string>>;
  /** The backend's data directory on this machine, when known. */
  dataDir?: string;
}

/** A store's or floor's round-trip counter, for adapters implementing `OpenTestTarget.roundTrips`. */
export function roundTripCounters(): {
  /** Starts counting for `subject`; returns the function its driver calls once per round trip. */
  track(subject: object): () => void;
  count(subject: AgentStore | RawAppendFloor): number;
} {
  const counts = new WeakMap<object, { n: number }>();
  return {
    track(subject) {
      const counter = { n: 0 };
      counts.set(subject, counter);
      return () => {
        counter.n += 1;
      };
    },
    count(subject) {
      const counter = counts.get(subject);
      if (!counter) throw new Error('roundTrips: this store or floor was not created by this target');
      return counter.n;
    },
  };
}

/** A server an adapter's `./testing` entry started for its target (e.g. from `@agentstore/servers`). */
export interface TargetServer {
  /** False for a server the process did not start (an `AGENTSTORE_*` URL): it is never restarted. */
  owned: boolean;
  stop(): Promise<void>;
  restart?(): Promise<void>;
}

/**
 * Starts a server, opens a target on it, and ties the two together (`withServer`); a target that
 * fails to open stops the server it would have used.
 */
export async function targetOnServer<Server extends TargetServer>(
  launch: () => Promise<Server>,
  open: (server: Server) => Promise<OpenTestTarget>,
): Promise<OpenTestTarget> {
  const server = await launch();
  try {
    return withServer(await open(server), server);
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/** The target with `server` stopped on close (after the target's own cleanup) and restartable when owned. */
export function withServer(target: OpenTestTarget, server: TargetServer): OpenTestTarget {
  const restart = server.owned ? server.restart?.bind(server) : undefined;
  return {
    ...target,
    ...(restart ? { restart } : {}),
    async close() {
      try {
        await target.close();
      } finally {
        await server.stop();
      }
    },
  };
}
