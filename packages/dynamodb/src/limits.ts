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
 * Sum of the messages' JSON bytes one append may carry. A transaction holds at most 4,000,000
 * bytes: 409,600 are reserved for the session item, and every item adds at most ~1,100 bytes of
 * key and attribute overhead (a 1,024-byte session id included), 99 items at most, so
 * 4,000,000 − 409,600 − 99 × 1,126 ≈ 3,479,000 bytes of JSON always fit; 3,400,000 leaves margin.
 */
export const MAX_APPEND_JSON_BYTES = 3_400_000;

/**
 * Messages per append such that any append within both declared limits needs at most 99 items
 * next to the session item: a message over one piece (380 KiB) takes one extra item per further
 * piece, and 3,400,000 bytes hold at most 8 such extra pieces, so 91 messages + 8 = 99 items.
 */
const MAX_MESSAGES_PER_APPEND = MAX_TRANSACTION_ITEMS - 1 - Math.floor(MAX_APPEND_JSON_BYTES / PIECE_BYTES);

/**
 * 1 MiB per message (3 pieces); 91 messages and 3,400,000 bytes of message JSON per append. Every
 * append within these limits fits one transaction (checked again before each call); `run()`
 * splits its commits to fit them, so a wide fan-out of large results never hits the 4 MB limit.
 */
export const DYNAMODB_LIMITS: StoreLimits = {
  maxMessageBytes: 1024 * 1024,
  maxMessagesPerAppend: MAX_MESSAGES_PER_APPEND,
  maxAppendBytes: MAX_APPEND_JSON_BYTES,
};
