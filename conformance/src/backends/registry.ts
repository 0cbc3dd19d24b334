import type { AgentStore } from '@agentstore/core';
import { createInMemoryStore } from '@agentstore/core';
import type { OpenTestTarget } from '@agentstore/core/testing';
import { launchD1 } from '../launchers/d1.ts';
import { launchDynamoDb } from '../launchers/dynamodb.ts';
import { launchPostgres } from '../launchers/postgres.ts';
import { tempDir } from '../launchers/process-tools.ts';
import { launchRedis } from '../launchers/redis.ts';
import { importAdapterTesting } from './adapter-module.ts';

export const BACKEND_NAMES = ['memory', 'sqlite', 'postgres', 'redis', 'dynamodb', 'd1'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

/** How another process reaches the same backend and data: see `reopenBackend`. */
export interface BackendHandle {
  name: BackendName;
  options: Record<string, string | boolean>;
}

export interface OpenBackend {
  name: BackendName;
  target: OpenTestTarget;
  handle: BackendHandle;
  /** Crash-restarts the server (Postgres, Redis), for fault tests; absent where there is none to restart. */
  restart?: () => Promise<void>;
  /** Closes the target and stops any server this process started. */
  close(): Promise<void>;
}

export interface OpenBackendOptions {
  /** Data on disk that survives restarts and other processes (DynamoDB Local file-backed, D1 persisted). */
  persist?: boolean;
}

type Factory<Options> = (options: Options) => Promise<OpenTestTarget>;

export function isBackendName(name: string): name is BackendName {
  return (BACKEND_NAMES as readonly string[]).includes(name);
}

/** A durable store in this process only: the loop's own cost, with nothing to reopen elsewhere. */
function memoryTarget(): OpenTestTarget {
  const store: AgentStore = createInMemoryStore(true);
  return {
    name: 'memory (test store)',
    reopen: {},
    createStore: () => ({ ...store, close: async () => {} }),
    describe: async () => 'in-process memory (durable test store)',
    close: () => store.close(),
  };
}

/** Starts (or finds, via AGENTSTORE_* URLs) the backend's server and opens its adapter's test target. */
export async function openBackend(name: BackendName, options: OpenBackendOptions = {}): Promise<OpenBackend> {
  const opened = (
    target: OpenTestTarget,
    stop: () => Promise<void>,
    restart?: () => Promise<void>,
  ): OpenBackend => ({
    name,
    target,
    handle: { name, options: { ...target.reopen } },
    ...(restart ? { restart } : {}),
    async close() {
      try {
        await target.close();
      } finally {
        await stop();
      }
    },
  });
  switch (name) {
    case 'memory':
      return opened(memoryTarget(), async () => {});
    case 'sqlite': {
      const { sqliteTestTarget } = await importAdapterTesting<{
        sqliteTestTarget: Factory<{ path: string }>;
      }>('@agentstore/sqlite');
      return opened(await sqliteTestTarget({ path: `${tempDir('sqlite')}/agent.db` }), async () => {});
    }
    case 'postgres': {
      const { postgresTestTarget } = await importAdapterTesting<{
        postgresTestTarget: Factory<{ connectionString: string }>;
      }>('@agentstore/postgres');
      const server = await launchPostgres();
      const target = await postgresTestTarget({ connectionString: server.info.url }).catch(async (e) => {
        await server.stop();
        throw e;
      });
      return opened(target, () => server.stop(), server.owned ? () => server.restart() : undefined);
    }
    case 'redis': {
      const { redisTestTarget } = await importAdapterTesting<{ redisTestTarget: Factory<{ url: string }> }>(
        '@agentstore/redis',
      );
      const server = await launchRedis();
      const target = await redisTestTarget({ url: server.info.url });
      return opened(target, () => server.stop(), server.owned ? () => server.restart() : undefined);
    }
    case 'dynamodb': {
      const { dynamodbTestTarget } = await importAdapterTesting<{
        dynamodbTestTarget: Factory<{ endpoint: string }>;
      }>('@agentstore/dynamodb');
      const server = await launchDynamoDb({ persist: options.persist ?? false });
      const target = await dynamodbTestTarget({ endpoint: server.info.endpoint }).catch(async (e) => {
        await server.stop();
        throw e;
      });
      return opened(target, () => server.stop());
    }
    case 'd1': {
      const { d1TestTarget } = await importAdapterTesting<{ d1TestTarget: Factory<{ binding: unknown }> }>(
        '@agentstore/d1',
      );
      const persist = options.persist ? tempDir('d1') : undefined;
      const server = await launchD1(persist ? { persist } : {});
      const target = await d1TestTarget({ binding: server.info.db });
      const backend = opened(target, () => server.stop());
      // Another process opens its own miniflare on the same persisted database.
      return persist ? { ...backend, handle: { name, options: { ...target.reopen, persist } } } : backend;
    }
  }
}

/**
 * In another process: opens the target a `BackendHandle` describes, on the same data. The caller
 * closes it; servers stay with the process that launched them.
 */
export async function reopenBackend(handle: BackendHandle): Promise<OpenTestTarget> {
  const { name, options } = handle;
  if (name === 'memory') throw new Error('the memory backend lives in one process and cannot be reopened');
  if (name === 'd1') {
    const { persist, ...rest } = options;
    if (typeof persist !== 'string')
      throw new Error('only a persisted D1 database can be reopened from another process');
    const { d1TestTarget } = await importAdapterTesting<{ d1TestTarget: Factory<Record<string, unknown>> }>(
      '@agentstore/d1',
    );
    const server = await launchD1({ persist });
    const target = await d1TestTarget({ ...rest, binding: server.info.db });
    return {
      ...target,
      async close() {
        await target.close();
        await server.stop();
      },
    };
  }
  const factoryName = `${name}TestTarget`;
  const module = await importAdapterTesting<Record<string, Factory<Record<string, unknown>>>>(
    `@agentstore/${name}`,
  );
  return module[factoryName]!(options);
}
