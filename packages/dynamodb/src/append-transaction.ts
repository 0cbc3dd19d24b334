import { createHash, randomBytes } from 'node:crypto';
import {
  type AppendInput,
  InvalidArgumentError,
  type JsonValue,
  PayloadTooLargeError,
} from '@agentstore/core';
import type {
  AttributeValue,
  TransactWriteItem,
  TransactWriteItemsCommandInput,
} from '@aws-sdk/client-dynamodb';
import { A, namesIn, SESSION_KIND } from './attributes.ts';
import { expiredBeforeIso, newIncarnation, type StoreContext, ttlValue } from './context.ts';
import { indexSets } from './index-keys.ts';
import { SESSION_SK } from './keys.ts';
import {
  MAX_SESSION_FIELD_BYTES,
  MAX_STATE_BYTES,
  MAX_TRANSACTION_BYTES,
  MAX_TRANSACTION_ITEMS,
  SESSION_ITEM_RESERVE,
} from './limits.ts';
import { encodeMessage } from './message-items.ts';
import { nullableString } from './session-item.ts';

/** JSON text of a state, checked against what one session item can hold. */
export function stateJson(state: JsonValue | undefined, argument: string): string {
  const json = JSON.stringify(state ?? null);
  const bytes = Buffer.byteLength(json);
  if (bytes > MAX_STATE_BYTES) {
    throw new InvalidArgumentError({
      argument,
      reason: `is ${bytes} bytes of JSON; a DynamoDB session item holds at most ${MAX_STATE_BYTES}`,
    });
  }
  return json;
}

export function checkFieldSize(value: string | null | undefined, argument: string): void {
  if (typeof value === 'string' && Buffer.byteLength(value) > MAX_SESSION_FIELD_BYTES) {
    throw new InvalidArgumentError({ argument, reason: `is over ${MAX_SESSION_FIELD_BYTES} bytes` });
  }
}

function transactionTooLarge(sessionId: string, what: 'items' | 'bytes', size: number, limit: number) {
  const error = new PayloadTooLargeError({ sessionId, subject: 'append', messageId: null, size, limit });
  error.message =
    `Session ${JSON.stringify(sessionId)}: this append needs ${size} ${what} in one DynamoDB transaction ` +
    `(messages over ~380 KB take several items), over the limit of ${limit}; nothing was written. ` +
    'Split it into smaller appends.';
  return error;
}

/**
 * The message Puts of an append, checked against the transaction limits before any call: at most
 * 99 items besides the session update, and the aggregate size with room for a full-size session
 * item. The Puts carry no condition: the session update's `headSeq = expectedSeq` guard already
 * lets exactly one append per seq commit, and the transaction is all or nothing, so an item at a
 * seq past the head can only be a leftover of an earlier session under this id (its session item
 * expired by TTL, or a deletion cut short). Overwriting it is what the new session must do; items
 * the new session does not overwrite (seqs past its head, chunks past a message's `parts`) are
 * never read as its own (see `decodeMessages` and `loadSession`).
 */
export function messagePuts(
  context: StoreContext,
  sessionId: string,
  input: AppendInput,
): TransactWriteItem[] {
  const pkBytes = Buffer.byteLength(sessionId);
  const puts: TransactWriteItem[] = [];
  let bytes = SESSION_ITEM_RESERVE;
  input.messages.forEach((message, i) => {
    // No TTL on message items: only the session item expires, so a session goes whole, never
    // its oldest messages first (an item's TTL starts when that item is written).
    const encoded = encodeMessage(sessionId, pkBytes, input.expectedSeq + 1 + i, message, null);
    bytes += encoded.bytes;
    for (const item of encoded.items) {
      puts.push({ Put: { TableName: context.tableName, Item: item } });
    }
  });
  if (puts.length + 1 > MAX_TRANSACTION_ITEMS) {
    throw transactionTooLarge(sessionId, 'items', puts.length + 1, MAX_TRANSACTION_ITEMS);
  }
  if (bytes > MAX_TRANSACTION_BYTES)
    throw transactionTooLarge(sessionId, 'bytes', bytes, MAX_TRANSACTION_BYTES);
  return puts;
}

/**
 * The session item's guarded update: head seq must equal `expectedSeq` (absent counts as 0 and is
 * created from `init`), and the lease must match (holder + epoch) or, without a token, be free or
 * expired by the client's clock less `maxClockSkewMs`. On failure DynamoDB returns the current item (ALL_OLD), which
 * tells a seq conflict from a lost lease without another read. A session it creates gets a fresh
 * `incarnation`.
 */
export function sessionUpdate(
  context: StoreContext,
  sessionId: string,
  input: AppendInput,
  nowMs: number,
): TransactWriteItem {
  const now = new Date(nowMs).toISOString();
  const values: Record<string, AttributeValue> = {
    ':head': { N: String(input.expectedSeq + input.messages.length) },
    ':now': { S: now },
  };
  const sets = ['#headSeq = :head', '#updatedAt = :now'];
  const conditions: string[] = [];
  const state = input.session?.state;
  if (state !== undefined) {
    values[':state'] = { S: stateJson(state, 'session.state') };
    sets.push('#state = :state');
  }
  if (input.expectedSeq === 0) {
    const init = input.session?.init;
    checkFieldSize(init?.agentName, 'session.init.agentName');
    checkFieldSize(init?.ownerId, 'session.init.ownerId');
    checkFieldSize(init?.tenantId, 'session.init.tenantId');
    Object.assign(values, {
      ':zero': { N: '0' },
      ':kind': { S: SESSION_KIND },
      ':agent': { S: init?.agentName ?? '' },
      ':owner': nullableString(init?.ownerId ?? null),
      ':tenant': nullableString(init?.tenantId ?? null),
      ':incarnation': { S: newIncarnation() },
    });
    // if_not_exists: a session made by acquireLease keeps its owner, tenant, name and epoch.
    sets.push(
      '#kind = :kind',
      '#agentName = if_not_exists(#agentName, :agent)',
      '#ownerId = if_not_exists(#ownerId, :owner)',
      '#tenantId = if_not_exists(#tenantId, :tenant)',
      '#createdAt = if_not_exists(#createdAt, :now)',
      '#leaseEpoch = if_not_exists(#leaseEpoch, :zero)',
      '#incarnation = if_not_exists(#incarnation, :incarnation)',
      ...indexSets(
        sessionId,
        {
          agentName: init?.agentName ?? '',
          ownerId: init?.ownerId ?? null,
          tenantId: init?.tenantId ?? null,
        },
        nowMs,
        values,
      ),
    );
    if (state === undefined) {
      values[':initState'] = { S: stateJson(init?.state, 'session.init.state') };
      sets.push('#state = if_not_exists(#state, :initState)');
    }
    conditions.push('(attribute_not_exists(#headSeq) OR #headSeq = :zero)');
  } else {
    values[':expected'] = { N: String(input.expectedSeq) };
    conditions.push('#headSeq = :expected');
  }
  if (input.lease) {
    values[':holder'] = { S: input.lease.holder };
    values[':epoch'] = { N: String(input.lease.epoch) };
    conditions.push('#leaseHolder = :holder AND #leaseEpoch = :epoch');
  } else {
    values[':expiredBefore'] = { S: expiredBeforeIso(context, nowMs) };
    conditions.push('(attribute_not_exists(#leaseHolder) OR #leaseExpiresAt <= :expiredBefore)');
  }
  // Under a lease it keeps, the append leaves `ttl` as acquire/renew set it (past the lease's end,
  // which this call cannot read); without one, or releasing it, the session is idle from now.
  const ttl = input.lease && !input.releaseLease ? null : ttlValue(context, nowMs);
  if (ttl !== null) {
    values[':ttl'] = { N: String(ttl) };
    sets.push('#ttl = :ttl');
  }
  const update = `SET ${sets.join(', ')}${input.releaseLease ? ' REMOVE #leaseHolder, #leaseExpiresAt' : ''}`;
  const condition = conditions.join(' AND ');
  return {
    Update: {
      TableName: context.tableName,
      Key: { [A.pk]: { S: sessionId }, [A.sk]: { S: SESSION_SK } },
      UpdateExpression: update,
      ConditionExpression: condition,
      ExpressionAttributeNames: namesIn(update, condition),
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * ClientRequestToken (≤ 36 chars): a hash of table, session, expectedSeq and message ids, plus a
 * nonce drawn once per `append` call. The SDK's own retries of that call resend the same token, so
 * a retry of a transaction that committed but whose response was lost returns success instead of
 * failing its own condition. Separate calls never share a token, so a second append of the same
 * input fails with SeqConflictError exactly as in every other store.
 */
export function appendToken(tableName: string, sessionId: string, input: AppendInput): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([tableName, sessionId, input.expectedSeq, input.messages.map((m) => m.id)]))
    .digest('hex');
  return digest.slice(0, 20) + randomBytes(8).toString('hex');
}

/** The whole append as one TransactWriteItems input: the session update first, then the Puts. */
export function buildAppendTransaction(
  context: StoreContext,
  sessionId: string,
  input: AppendInput,
  nowMs: number,
  token: string,
  puts: TransactWriteItem[] = messagePuts(context, sessionId, input),
): TransactWriteItemsCommandInput {
  return {
    TransactItems: [sessionUpdate(context, sessionId, input, nowMs), ...puts],
    ClientRequestToken: token,
  };
}
