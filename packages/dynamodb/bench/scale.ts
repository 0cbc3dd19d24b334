/**
 * DynamoDB at size: requests and index items read per listing with each filter, per retention
 * batch, per append and load, on a throwaway DynamoDB Local (or AGENTSTORE_DYNAMODB_ENDPOINT), next
 * to the same figures at 1/100th of the size. Not in CI; DynamoDB Local's timings are not
 * DynamoDB's, its request and item counts are. From packages/dynamodb:
 *   pnpm run scale                       # 2,000 sessions; SCALE_SESSIONS=… to change
 */
import {
  machineInfo,
  printScaleReport,
  seedScaleSessions,
  sweepIdleSessions,
  timeOperation,
} from '@agentstore/bench';
import type { NewMessage } from '@agentstore/core';
import { launchDynamoDb } from '@agentstore/servers';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createTable, dynamodbStore } from '../src/index.ts';

const SESSIONS = Number(process.env.SCALE_SESSIONS ?? 2_000);
const SAMPLES = Number(process.env.SCALE_SAMPLES ?? 20);

const message = (i: number): NewMessage => ({
  id: `m${i}`,
  role: 'user',
  content: 'x'.repeat(200),
  createdAt: new Date().toISOString(),
});

async function run(endpoint: string, sessions: number) {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'agentstore', secretAccessKey: 'agentstore' },
  });
  // Requests and the items each Query read (ScannedCount: before any filter).
  let requests = 0;
  let scanned = 0;
  const send = client.send.bind(client);
  client.send = (async (command: never) => {
    const output = (await send(command)) as { ScannedCount?: number };
    requests += 1;
    scanned += output.ScannedCount ?? 0;
    return output;
  }) as typeof client.send;
  const tableName = `scale-${sessions}-${Date.now().toString(36)}`;
  await createTable(client, tableName);
  const store = dynamodbStore({ client, tableName });
  // The first 10% go idle before the cutoff; the rest are created after it.
  const { cutoff, seedSeconds } = await seedScaleSessions(store, sessions, 25, message);

  const rows: [string, string, string][] = [];
  const measure = async (what: string, op: () => Promise<unknown>, samples = SAMPLES) => {
    requests = 0;
    scanned = 0;
    await op();
    const counts = `${requests} requests, ${scanned} items read`;
    rows.push([what, await timeOperation(samples, op), counts]);
  };
  for (const [what, filter] of [
    ['no filter', {}],
    ['by owner', { ownerId: 'owner-7' }],
    ['by tenant', { tenantId: 'tenant-7' }],
    ['by agent', { agentName: 'agent-7' }],
    ['by absent owner', { ownerId: 'nobody' }],
    ['by tenant + agent', { tenantId: 'tenant-7', agentName: 'agent-7' }],
  ] as const) {
    await measure(`listSessions ${what} (50)`, () => store.listSessions({ ...filter, limit: 50 }));
  }
  const id = `s-${String(Math.floor(sessions / 2)).padStart(8, '0')}`;
  await measure('load, 2 messages', () => store.load(id));
  let head = 2;
  await measure('append 1 message at the head', async () => {
    await store.append(id, { expectedSeq: head, messages: [message(head)], lease: null });
    head += 1;
  });
  requests = 0;
  scanned = 0;
  const sweep = await sweepIdleSessions(store, cutoff, 500);
  rows.push([
    `retention: ${sweep.deleted} idle sessions, batches of 500`,
    `${sweep.seconds.toFixed(2)} s total`,
    `${sweep.batches} calls, ${requests} requests, ${scanned} items read`,
  ]);
  await client.send(new DeleteTableCommand({ TableName: tableName }));
  client.destroy();
  return {
    label: `${sessions.toLocaleString('en')} sessions (created in ${seedSeconds.toFixed(0)} s)`,
    rows,
  };
}

const server = await launchDynamoDb();
try {
  const atStart = machineInfo();
  const results = [];
  for (const sessions of [Math.max(20, SESSIONS / 100), SESSIONS])
    results.push(await run(server.info.endpoint, sessions));
  printScaleReport(
    'DynamoDB Local at size',
    SAMPLES,
    ['operation', 'ms', 'requests / items read'],
    results,
    atStart,
  );
} finally {
  await server.stop();
}
