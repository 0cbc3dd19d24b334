import {
  type AcquireLeaseInput,
  InvalidArgumentError,
  LeaseLostError,
  type LeaseToken,
  SessionAccessDeniedError,
  SessionBusyError,
  type SessionRecord,
} from '@agentstore/core';
import { expiryIso, isLeaseLive, ownerMatches, retryAfterMs } from '@agentstore/core/store';
import { type AttributeValue, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { checkFieldSize, stateJson } from './append-transaction.ts';
import { A, namesIn, SESSION_KIND } from './attributes.ts';
import { errorName, expiredBeforeIso, leaseTtlValue, newIncarnation, type StoreContext } from './context.ts';
import { indexSets } from './index-keys.ts';
import { SESSION_SK } from './keys.ts';
import { decodeSession, type Item, nullableString } from './session-item.ts';

const sessionKey = (sessionId: string) => ({ [A.pk]: { S: sessionId }, [A.sk]: { S: SESSION_SK } });

function validateHolder(holder: unknown): asserts holder is string {
  if (typeof holder !== 'string')
    throw new InvalidArgumentError({ argument: 'holder', reason: 'must be a string' });
  checkFieldSize(holder, 'holder');
}

/** A token no stored lease can match (the memory store answers these with "not held", too). */
const isToken = (holder: unknown, epoch: unknown) =>
  typeof holder === 'string' && Number.isSafeInteger(epoch);

const isConditionFailure = (error: unknown) => errorName(error) === 'ConditionalCheckFailedException';
const oldItem = (error: unknown) => (error as { Item?: Item }).Item;

/** Owner and tenant must match as stored: a string equals, null is the NULL type. */
function ownershipCondition(name: '#ownerId' | '#tenantId', placeholder: string, value: string | null) {
  return value === null ? `attribute_type(${name}, :nullType)` : `${name} = ${placeholder}`;
}

/** Conflicting acquires of one free session can both lose a race; this many tries settle it. */
const ACQUIRE_ATTEMPTS = 3;

/**
 * One conditional UpdateItem: creates the session from `init` if absent, else requires the same
 * owner and tenant and a lease that is free, expired (by this client's clock less
 * `maxClockSkewMs`) or this holder's; bumps the epoch, which survives release. On failure the
 * ALL_OLD item tells denied from busy.
 */
export async function acquireLease(
  context: StoreContext,
  sessionId: string,
  { holder, ttlMs, init }: AcquireLeaseInput,
): Promise<{ epoch: number; session: SessionRecord }> {
  validateHolder(holder);
  if (typeof init !== 'object' || init === null) {
    throw new InvalidArgumentError({ argument: 'init', reason: 'must be an object' });
  }
  checkFieldSize(init.agentName, 'init.agentName');
  checkFieldSize(init.ownerId, 'init.ownerId');
  checkFieldSize(init.tenantId, 'init.tenantId');
  const initState = stateJson(init.state, 'init.state');
  for (let attempt = 1; ; attempt++) {
    const nowMs = Date.now();
    const now = new Date(nowMs).toISOString();
    const values: Record<string, AttributeValue> = {
      ':holder': { S: holder },
      ':expires': { S: expiryIso(nowMs, ttlMs) },
      ':now': { S: now },
      ':expiredBefore': { S: expiredBeforeIso(context, nowMs) },
      ':zero': { N: '0' },
      ':one': { N: '1' },
      ':kind': { S: SESSION_KIND },
      ':agent': { S: init.agentName },
      ':owner': nullableString(init.ownerId),
      ':tenant': nullableString(init.tenantId),
      ':state': { S: initState },
      ':incarnation': { S: newIncarnation() },
    };
    if (init.ownerId === null || init.tenantId === null) values[':nullType'] = { S: 'NULL' };
    const ttl = leaseTtlValue(context, nowMs + ttlMs);
    if (ttl !== null) values[':ttl'] = { N: String(ttl) };
    const update =
      'SET #leaseHolder = :holder, #leaseExpiresAt = :expires, ' +
      '#leaseEpoch = if_not_exists(#leaseEpoch, :zero) + :one, #kind = :kind, ' +
      '#agentName = if_not_exists(#agentName, :agent), #ownerId = if_not_exists(#ownerId, :owner), ' +
      '#tenantId = if_not_exists(#tenantId, :tenant), #state = if_not_exists(#state, :state), ' +
      '#headSeq = if_not_exists(#headSeq, :zero), #createdAt = if_not_exists(#createdAt, :now), ' +
      '#incarnation = if_not_exists(#incarnation, :incarnation), ' +
      `#updatedAt = if_not_exists(#updatedAt, :now)${ttl === null ? '' : ', #ttl = :ttl'}, ` +
      indexSets(sessionId, init, nowMs, values).join(', ');
    const condition =
      `attribute_not_exists(#pk) OR (${ownershipCondition('#ownerId', ':owner', init.ownerId)} AND ` +
      `${ownershipCondition('#tenantId', ':tenant', init.tenantId)} AND ` +
      '(attribute_not_exists(#leaseHolder) OR #leaseExpiresAt <= :expiredBefore OR #leaseHolder = :holder))';
    try {
      const { Attributes } = await context.client.send(
        new UpdateItemCommand({
          TableName: context.tableName,
          Key: sessionKey(sessionId),
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeNames: namesIn(update, condition),
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const session = decodeSession(sessionId, Attributes ?? {});
      return { epoch: session.lease!.epoch, session };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const item = oldItem(error);
      if (item) {
        const stored = decodeSession(sessionId, item);
        if (!ownerMatches(stored, init)) throw new SessionAccessDeniedError({ sessionId });
        // Judged as the condition was: the lease lives until its expiry plus the declared skew.
        const checkedAt = Date.now() - context.maxClockSkewMs;
        if (isLeaseLive(stored.lease, checkedAt) && stored.lease.holder !== holder) {
          throw new SessionBusyError({ sessionId, retryAfterMs: retryAfterMs(stored.lease, checkedAt) });
        }
      }
      // The item changed between the condition and this check (or vanished): try again.
      if (attempt >= ACQUIRE_ATTEMPTS) throw error;
    }
  }
}

/** Extends the lease if this holder and epoch still hold it (expired but not taken over is fine). */
export async function renewLease(
  context: StoreContext,
  sessionId: string,
  { holder, epoch, ttlMs }: LeaseToken & { ttlMs: number },
): Promise<{ expiresAt: string }> {
  if (!isToken(holder, epoch)) throw new LeaseLostError({ sessionId, holder, epoch });
  const nowMs = Date.now();
  const expiresAt = expiryIso(nowMs, ttlMs);
  const ttl = leaseTtlValue(context, nowMs + ttlMs);
  const update = `SET #leaseExpiresAt = :expires${ttl === null ? '' : ', #ttl = :ttl'}`;
  const values = { ':expires': { S: expiresAt }, ...(ttl === null ? {} : { ':ttl': { N: String(ttl) } }) };
  if (!(await updateHeldLease(context, sessionId, { holder, epoch }, update, values))) {
    throw new LeaseLostError({ sessionId, holder, epoch });
  }
  return { expiresAt };
}

/**
 * Applies `update` to the session item only while `token` holds its lease (one conditional
 * UpdateItem); false when the holder or epoch no longer match.
 */
async function updateHeldLease(
  context: StoreContext,
  sessionId: string,
  { holder, epoch }: LeaseToken,
  update: string,
  values: Record<string, AttributeValue>,
): Promise<boolean> {
  const condition = '#leaseHolder = :holder AND #leaseEpoch = :epoch';
  try {
    await context.client.send(
      new UpdateItemCommand({
        TableName: context.tableName,
        Key: sessionKey(sessionId),
        UpdateExpression: update,
        ConditionExpression: condition,
        ExpressionAttributeNames: namesIn(update, condition),
        ExpressionAttributeValues: { ...values, ':holder': { S: holder }, ':epoch': { N: String(epoch) } },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Clears the lease if this holder and epoch hold it; the epoch counter stays. */
export async function releaseLease(
  context: StoreContext,
  sessionId: string,
  { holder, epoch }: LeaseToken,
): Promise<{ released: boolean }> {
  if (!isToken(holder, epoch)) return { released: false };
  const released = await updateHeldLease(
    context,
    sessionId,
    { holder, epoch },
    'REMOVE #leaseHolder, #leaseExpiresAt',
    {},
  );
  return { released };
}
