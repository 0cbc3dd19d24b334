import { PayloadTooLargeError } from '@agentstore/core';
import { messageByteLength } from '@agentstore/core/store';
import { describe, expect, it } from 'vitest';
import { POSTGRES_LIMITS } from '../src/index.ts';
import { init, message, uniqueId, usePostgres } from './harness.ts';

const pg = usePostgres('limits');

/** A message of exactly `bytes`, full of characters JSON and SQL literals escape. */
function worstCaseMessage(id: string, bytes: number) {
  const base = message(id, '');
  const padding = bytes - messageByteLength(base);
  // `"` costs 2 bytes in JSON; an odd remainder is padded with one plain character.
  const content = '"'.repeat(Math.floor(padding / 2)) + 'x'.repeat(padding % 2);
  const built = { ...base, content };
  expect(messageByteLength(built)).toBe(bytes);
  return built;
}

describe('declared limits hold at their edges', () => {
  it('declares 4 MiB per message and 64 messages per append', () => {
    expect(POSTGRES_LIMITS).toEqual({ maxMessageBytes: 4 * 1024 * 1024, maxMessagesPerAppend: 64 });
  });

  it('commits maxMessagesPerAppend messages of maxMessageBytes each in one append (256 MiB)', async () => {
    const store = await pg.store();
    const id = uniqueId();
    const { maxMessageBytes, maxMessagesPerAppend } = store.limits;
    const big = Array.from({ length: maxMessagesPerAppend }, (_, i) =>
      worstCaseMessage(`m${i}`, maxMessageBytes),
    );
    const result = await store.append(id, {
      expectedSeq: 0,
      messages: big,
      session: { init: init() },
      lease: null,
    });
    expect(result.headSeq).toBe(maxMessagesPerAppend);
    const { rows } = await pg.pool.query(
      `SELECT count(*)::int AS n, sum(octet_length(body))::bigint AS bytes FROM "${pg.schema}".agentstore_messages WHERE session_id = $1`,
      [id],
    );
    expect(rows[0]).toEqual({
      n: maxMessagesPerAppend,
      bytes: String(maxMessagesPerAppend * maxMessageBytes),
    });
    const loaded = await store.load(id, { afterSeq: maxMessagesPerAppend - 1 });
    expect(loaded?.messages).toEqual([{ ...big[maxMessagesPerAppend - 1], seq: maxMessagesPerAppend }]);
  }, 120_000);

  it('refuses one message or one byte more before any write', async () => {
    const store = await pg.store();
    const id = uniqueId();
    const tooMany = Array.from({ length: store.limits.maxMessagesPerAppend + 1 }, (_, i) => message(`m${i}`));
    await expect(
      store.append(id, { expectedSeq: 0, messages: tooMany, session: { init: init() }, lease: null }),
    ).rejects.toBeInstanceOf(PayloadTooLargeError);
    const over = worstCaseMessage('big', store.limits.maxMessageBytes + 1);
    await expect(store.append(id, { expectedSeq: 0, messages: [over], lease: null })).rejects.toBeInstanceOf(
      PayloadTooLargeError,
    );
    expect(await store.load(id)).toBeNull();
  });
});
