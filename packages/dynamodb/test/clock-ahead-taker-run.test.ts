import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { type AgentStore, run } from '@agentstore/core';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { dynamodbStore } from '../src/index.ts';
import { chargeAgent, chargeLlm } from './support/charge-agent.ts';
import { freshTable, sessionId, testClient } from './support/dynamodb.ts';

/*
 * Issue 28: with only a declared clock skew between DynamoDB clients, a worker whose clock ran
 * 40 s ahead took a healthy lease at once and the tool fired twice. Here the holder runs in this
 * process with a correct clock and keeps renewing while its handler runs; the taker is another
 * process 40 s ahead that waits for the lease for more than two TTLs. It must never get it.
 */
const client = testClient();
let table: Awaited<ReturnType<typeof freshTable>>;
let store: AgentStore;
// Renewed every 1.5 s; the taker waits through several renewals, longer than two TTLs. The
// holder keeps its lease unless a renewal is held up for more than 4.8 s (its local deadline).
const TTL = 6_000;
const TAKER_WAIT = 13_000;

beforeAll(async () => {
  table = await freshTable(client, 'ahead-run');
  store = dynamodbStore({ client, tableName: table.tableName });
});
afterAll(async () => {
  await store?.close();
  await table?.drop();
  client.destroy();
});

/** Runs the taker process to its end; its JSON lines. */
function runTaker(config: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const script = join(import.meta.dirname, 'support/ahead-taker.ts');
  const child = spawn(process.execPath, ['--conditions=@agentstore/source', script, JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`the taker process exited with ${code}: ${err}`));
      else
        resolve(
          out
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line)),
        );
    });
  });
}

it('a worker whose clock runs 40 s ahead cannot take a live, renewed lease: the tool fires once', async () => {
  const id = sessionId('ahead-run');
  let fired = 0;
  let started!: () => void;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  let finish!: () => void;
  const gate = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const holder = run(
    chargeAgent(async () => {
      fired += 1;
      started();
      await gate;
      return { charged: true };
    }),
    { store, sessionId: id, message: 'charge it', llm: chargeLlm(), leaseTtlMs: TTL },
  );
  // The holder's handler runs (the lease is held and renewing) until the taker has given up.
  await running;
  const lines = await runTaker({
    endpoint: inject('dynamodbEndpoint'),
    tableName: table.tableName,
    sessionId: id,
    ttlMs: TTL,
    waitMs: TAKER_WAIT,
    aheadMs: 40_000,
  });
  finish();
  expect(lines.filter((line) => line.t === 'fired')).toEqual([]);
  const outcome = lines.at(-1)!;
  expect(outcome).toMatchObject({ t: 'failed', code: 'SESSION_BUSY' });
  // What is left of its watch of the record the holder renewed last.
  expect(outcome.retryAfterMs).toBeGreaterThan(0);
  expect(outcome.retryAfterMs).toBeLessThanOrEqual(TTL);
  expect((await holder).status).toBe('complete');
  expect(fired).toBe(1);
}, 60_000);
