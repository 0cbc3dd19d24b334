import type { NewMessage } from '@agentstore/core';
import { messageByteLength } from '@agentstore/core/store';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { expect, it } from 'vitest';
import { messagePuts } from './append-transaction.ts';
import { DYNAMODB_LIMITS, MAX_TRANSACTION_ITEMS, PIECE_BYTES } from './limits.ts';

const context = { client: {} as DynamoDBClient, tableName: 't', ttlSeconds: 86_400 };
const message = (i: number, bytes: number): NewMessage => {
  const base: NewMessage = { id: `m${i}`, role: 'tool', content: '', createdAt: '2026-01-01T00:00:00.000Z' };
  return { ...base, content: 'x'.repeat(bytes - messageByteLength(base)) };
};

// The worst cases the declared limits allow: a 1,024-byte session id (and a TTL configured), the
// byte budget spent on messages just over one piece (one extra item each), the rest small.
it('every append within the declared limits fits one transaction, worst cases included', () => {
  const { maxMessagesPerAppend: count, maxAppendBytes: budget, maxMessageBytes } = DYNAMODB_LIMITS;
  const sessionId = 's'.repeat(1024);
  const shapes: number[][] = [];
  for (const size of [PIECE_BYTES + 1, 2 * PIECE_BYTES + 1, maxMessageBytes]) {
    const heavy = Math.floor((budget! - count * 100) / size);
    const light = Math.floor((budget! - heavy * size) / (count - heavy));
    shapes.push([...Array(heavy).fill(size), ...Array(count - heavy).fill(Math.min(light, maxMessageBytes))]);
  }
  shapes.push(Array(count).fill(Math.floor(budget! / count)));
  for (const sizes of shapes) {
    const messages = sizes.map((bytes, i) => message(i, bytes));
    const total = messages.reduce((sum, m) => sum + messageByteLength(m), 0);
    expect(total).toBeLessThanOrEqual(budget!);
    const puts = messagePuts(context, sessionId, { expectedSeq: 0, messages, lease: null });
    expect(puts.length + 1).toBeLessThanOrEqual(MAX_TRANSACTION_ITEMS);
  }
});
