// Runs getting-started's snippets as written, on every backend, against real servers.
import { join } from 'node:path';
import { type AgentStore, defineAgent, run, tool } from '@agentstore/core';
import { scriptedLlm } from '@agentstore/core/testing';
import {
  type LaunchedServer,
  launchD1,
  launchDynamoDb,
  launchPostgres,
  launchRedis,
  tempDir,
} from '@agentstore/servers';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { firstDurableRun } from '../src/docs/first-durable-run.ts';
import { openD1, openDynamoDb, openPostgres, openRedis, openSqlite } from '../src/docs/open-each-store.ts';

const servers: LaunchedServer<unknown>[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  for (const server of servers) await server.stop();
});

const llm = () =>
  scriptedLlm([
    { text: 'Looking it up.', toolCalls: [{ name: 'getOrder', input: { orderId: '9' } }] },
    { text: 'Order 9 has shipped.' },
  ]);

/** The first durable run's agent on `store`, run twice: the second run stores the user's turn once. */
async function firstRunOn(store: AgentStore) {
  const agent = defineAgent({
    name: 'support',
    instructions: 'Answer support questions.',
    tools: {
      getOrder: tool({
        description: 'Reads an order by id',
        input: z.object({ orderId: z.string() }),
        safeToRetry: true,
        handler: async ({ orderId }) => ({ orderId, status: 'shipped' }),
      }),
    },
  });
  const options = {
    store,
    sessionId: 'customer-17:ticket-4',
    message: 'Where is order 9?',
    messageId: 'request-5f1c',
  };
  expect((await run(agent, { ...options, llm: llm() })).response).toBe('Order 9 has shipped.');
  await run(agent, { ...options, llm: llm() });
  const stored = await store.load('customer-17:ticket-4');
  expect(stored!.messages.filter((m) => m.role === 'user')).toHaveLength(1);
}

describe('getting started, as written', () => {
  it('the first durable run (SQLite file in the working directory)', async () => {
    const dir = tempDir('getting-started');
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect(await firstDurableRun(llm())).toBe('Order 9 has shipped.');
    } finally {
      process.chdir(cwd);
    }
  });

  it('SQLite', async () => {
    const store = openSqlite(join(tempDir('getting-started'), 'agent.db'));
    cleanups.push(() => store.close());
    await firstRunOn(store);
  });

  it('PostgreSQL', async () => {
    const server = await launchPostgres();
    servers.push(server);
    const pool = new pg.Pool({ connectionString: server.info.url });
    cleanups.push(() => pool.end());
    const store = await openPostgres(pool);
    await firstRunOn(store);
  });

  it('Redis', async () => {
    const server = await launchRedis();
    servers.push(server);
    const client = new Redis(server.info.url);
    cleanups.push(() => client.quit());
    await firstRunOn(openRedis(client));
  });

  it('DynamoDB', async () => {
    const server = await launchDynamoDb();
    servers.push(server);
    const client = new DynamoDBClient({
      endpoint: server.info.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'a' },
    });
    cleanups.push(async () => client.destroy());
    await firstRunOn(await openDynamoDb(client, 'agentstore'));
  });

  it('Cloudflare D1', async () => {
    const server = await launchD1();
    servers.push(server);
    await firstRunOn(await openD1(server.info.db));
  });
});
