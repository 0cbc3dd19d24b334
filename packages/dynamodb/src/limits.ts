import type { StoreLimits } from '@agentstore/core';

/** DynamoDB's hard limits (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html). */
export const MAX_ITEM_BYTES = 400 * 1024;
export const MAX_TRANSACTION_ITEMS = 100;
/** "4 MB" aggregate per transaction; counted as 4,000,000 to stay clear of either reading of MB. */
export const MAX_TRANSACTION_BYTES = 4_000_000;

/**
 * A message's JSON is cut into pieces of at most this many UTF-8 bytes, one item each. The rest of
 * an item (a session id of up to 1,024 bytes, sort key, attribute names, ttl) fits in the margin.
 */
export const PIECE_BYTES = 380 * 1024;

/**
 * Bytes an append reserves for the session item, whose stored size (its state) is unknown when
 * the append does not replace the state: the whole item limit.
 */
export const SESSION_ITEM_RESERVE = MAX_ITEM_BYTES;

/** The session item's own parts are bounded so that it always fits in one item. */
export const MAX_STATE_BYTES = 300 * 1024;
export const MAX_SESSION_FIELD_BYTES = 16 * 1024;

/**
 * 1 MiB per message (3 pieces), so three messages of the maximum size still fit one transaction
 * next to the session item. 99 messages per append: 100 transaction items minus the session item.
 * An append whose messages need more than 99 items or ~3.5 MB in all (large messages, pieces
 * included) fails with PayloadTooLargeError before any call; see the README.
 */
export const DYNAMODB_LIMITS: StoreLimits = {
  maxMessageBytes: 1024 * 1024,
  maxMessagesPerAppend: MAX_TRANSACTION_ITEMS - 1,
};
