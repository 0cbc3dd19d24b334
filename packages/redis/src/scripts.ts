/**
 * The server-side Lua scripts. Each touches only the keys it is given: a session's hash and
 * message list (same hash tag, so one Cluster slot) and, on a standalone server only, the
 * session index as a third key. Times come from the client (`Date.now()` as an argument);
 * the scripts never read the server clock.
 *
 * Session hash fields: id, agentName, ownerId, tenantId, state, leaseHolder (all JSON text, so
 * null, "null" and lone surrogates stay distinct), headSeq, leaseEpoch (kept after release),
 * leaseExpiresMs, createdAt, updatedAt.
 */

/** Refreshes the optional TTL on both session keys ('0' = no TTL). */
const REFRESH_TTL = `
local function refresh_ttl(ttl)
  if ttl ~= '0' then
    redis.call('PEXPIRE', KEYS[1], ttl)
    redis.call('PEXPIRE', KEYS[2], ttl)
  end
end
`;

/**
 * Creates the session hash. Index modes: 'inline' adds the index member in this script (KEYS[3]),
 * 'done' means the caller already indexed it, 'ask' returns {'INDEX'} before writing anything so
 * the caller can index first (Cluster: the index lives in another slot).
 */
const CREATE_SESSION = `
local function create_session(id, agent, owner, tenant, state, now_iso, index_mode, member)
  redis.call('HSET', KEYS[1], 'id', id, 'agentName', agent, 'ownerId', owner, 'tenantId', tenant,
    'state', state, 'headSeq', '0', 'createdAt', now_iso, 'updatedAt', now_iso)
  if index_mode == 'inline' then redis.call('ZADD', KEYS[3], 0, member) end
end
`;

/**
 * KEYS: session, messages[, index]
 * ARGV: 1 expectedSeq, 2 nowMs, 3 nowIso, 4 'token'|'none', 5 holderJson, 6 epoch,
 *       7 releaseLease '1'|'0', 8 hasState '1'|'0', 9 stateJson, 10 init agentNameJson,
 *       11 init ownerJson, 12 init tenantJson, 13 init stateJson, 14 ttlMs|'0',
 *       15 index mode, 16 index member, 17 idJson, 18.. message JSON (seq already inside)
 * Returns {'OK', headSeq} | {'SEQ', storedHead} | {'LEASE'} | {'INDEX'}.
 */
export const APPEND_LUA = `${REFRESH_TTL}${CREATE_SESSION}
local s = redis.call('HMGET', KEYS[1], 'headSeq', 'leaseHolder', 'leaseEpoch', 'leaseExpiresMs')
local exists = s[1] ~= false
local head = 0
if exists then head = tonumber(s[1]) end
if head ~= tonumber(ARGV[1]) then return {'SEQ', s[1] or '0'} end
if ARGV[4] == 'token' then
  if s[2] ~= ARGV[5] or s[3] ~= ARGV[6] then return {'LEASE'} end
elseif s[2] and tonumber(s[4]) > tonumber(ARGV[2]) then
  return {'LEASE'}
end
if not exists then
  if ARGV[15] == 'ask' then return {'INDEX'} end
  create_session(ARGV[17], ARGV[10], ARGV[11], ARGV[12], ARGV[13], ARGV[3], ARGV[15], ARGV[16])
end
local new_head = head + (#ARGV - 17)
redis.call('RPUSH', KEYS[2], unpack(ARGV, 18))
redis.call('HSET', KEYS[1], 'headSeq', string.format('%.0f', new_head), 'updatedAt', ARGV[3])
if ARGV[8] == '1' then redis.call('HSET', KEYS[1], 'state', ARGV[9]) end
if ARGV[7] == '1' then redis.call('HDEL', KEYS[1], 'leaseHolder', 'leaseExpiresMs') end
refresh_ttl(ARGV[14])
return {'OK', new_head}
`;

/**
 * Read-only. KEYS: session, messages. ARGV: 1 afterSeq, 2 '1' to read messages | '0' session only.
 * Returns nil when the session is absent, else {sessionHashFlat, messagesAfterSeq}.
 */
export const LOAD_LUA = `
local s = redis.call('HGETALL', KEYS[1])
if #s == 0 then return false end
local msgs = {}
if ARGV[2] == '1' then
  local head
  for i = 1, #s, 2 do
    if s[i] == 'headSeq' then head = tonumber(s[i + 1]) end
  end
  local after = tonumber(ARGV[1])
  if head and head > after then msgs = redis.call('LRANGE', KEYS[2], after, head - 1) end
end
return {s, msgs}
`;

/**
 * KEYS: session, messages[, index]
 * ARGV: 1 holderJson, 2 nowMs, 3 leaseTtlMs, 4 agentNameJson, 5 ownerJson, 6 tenantJson,
 *       7 stateJson, 8 nowIso, 9 ttlMs|'0', 10 index mode, 11 index member, 12 idJson
 * Returns {'OK', epoch, sessionHashFlat} | {'DENIED'} | {'BUSY', expiresMs} | {'INDEX'}.
 */
export const ACQUIRE_LUA = `${REFRESH_TTL}${CREATE_SESSION}
local s = redis.call('HMGET', KEYS[1], 'headSeq', 'ownerId', 'tenantId', 'leaseHolder', 'leaseExpiresMs')
local now = tonumber(ARGV[2])
if s[1] then
  if s[2] ~= ARGV[5] or s[3] ~= ARGV[6] then return {'DENIED'} end
  if s[4] and s[4] ~= ARGV[1] and tonumber(s[5]) > now then return {'BUSY', s[5]} end
else
  if ARGV[10] == 'ask' then return {'INDEX'} end
  create_session(ARGV[12], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[10], ARGV[11])
end
local epoch = redis.call('HINCRBY', KEYS[1], 'leaseEpoch', 1)
redis.call('HSET', KEYS[1], 'leaseHolder', ARGV[1],
  'leaseExpiresMs', string.format('%.0f', now + tonumber(ARGV[3])))
refresh_ttl(ARGV[9])
return {'OK', epoch, redis.call('HGETALL', KEYS[1])}
`;

/**
 * KEYS: session, messages. ARGV: 1 holderJson, 2 epoch, 3 expiresMs, 4 ttlMs|'0'.
 * Returns 1 when renewed, 0 when the holder/epoch no longer hold the lease.
 */
export const RENEW_LUA = `${REFRESH_TTL}
local s = redis.call('HMGET', KEYS[1], 'leaseHolder', 'leaseEpoch')
if not s[1] or s[1] ~= ARGV[1] or s[2] ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'leaseExpiresMs', ARGV[3])
refresh_ttl(ARGV[4])
return 1
`;

/** KEYS: session, messages. ARGV: 1 holderJson, 2 epoch, 3 ttlMs|'0'. Returns 1 when released. */
export const RELEASE_LUA = `${REFRESH_TTL}
local s = redis.call('HMGET', KEYS[1], 'leaseHolder', 'leaseEpoch')
if not s[1] or s[1] ~= ARGV[1] or s[2] ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], 'leaseHolder', 'leaseExpiresMs')
refresh_ttl(ARGV[3])
return 1
`;

/**
 * Standalone only (two slots). KEYS: index, session. ARGV: 1 member.
 * Drops an index member whose session is gone (expired by TTL), atomically with the check.
 */
export const PRUNE_INDEX_LUA = `
if redis.call('EXISTS', KEYS[2]) == 0 then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
`;
