/**
 * A worker on another machine whose clock runs ahead: a child process that moves its wall clock
 * by `aheadMs` (its monotonic clock is untouched) and then resumes a session with run(), waiting
 * up to `waitMs` for the lease. It prints one JSON line per event: `fired` when its `charge`
 * handler runs, then `done` (the run's status) or `failed` (the error's code and retryAfterMs).
 */
import { run } from '@agentstore/core';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamodbStore } from '../../src/index.ts';
import { chargeAgent, chargeLlm } from './charge-agent.ts';
import { withWallClock } from './wall-clock.ts';

interface TakerConfig {
  endpoint: string;
  tableName: string;
  sessionId: string;
  ttlMs: number;
  waitMs: number;
  aheadMs: number;
}

const config = JSON.parse(process.argv[2]!) as TakerConfig;
const say = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

const client = new DynamoDBClient({
  endpoint: config.endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'agentstore', secretAccessKey: 'agentstore' },
});
const store = dynamodbStore({ client, tableName: config.tableName });
await withWallClock(config.aheadMs, async () => {
  try {
    const result = await run(
      chargeAgent(async () => {
        say({ t: 'fired' });
        return { charged: true };
      }),
      {
        store,
        sessionId: config.sessionId,
        llm: chargeLlm(),
        leaseTtlMs: config.ttlMs,
        leaseWaitMs: config.waitMs,
      },
    );
    say({ t: 'done', status: result.status });
  } catch (error) {
    const { code, retryAfterMs, message } = error as {
      code?: string;
      retryAfterMs?: number;
      message?: string;
    };
    say({
      t: 'failed',
      code: code ?? null,
      retryAfterMs: retryAfterMs ?? null,
      message: message ?? String(error),
    });
  }
});
await store.close();
client.destroy();
