/**
 * The server-side Lua scripts. Each touches only the keys it is given: a session's hash and
 * message list (same hash tag, so one Cluster slot) and, on a standalone server only, the
 * session index as a third key. Lease expiry is granted and judged by the server's clock (`TIME`,
 * allowed in scripts under effects replication, the default since Redis 5 and the only mode since
 * 7), so a client whose clock is off can neither take a live lease nor stretch or shorten one.
 * createdAt, updatedAt and the activity index score a script writes come from the same clock:
 * retention judges idleness by them, and a writer whose clock runs behind must not make a session
 * it just wrote look idle. (A Cluster creation's index entry is added by the client, with its
 * clock: a sweep only uses it to find candidates, and judges each by `updatedAt`.)
 *
 * Session hash fields: id, agentName, ownerId, tenantId, state, leaseHolder (all JSON text, so
 * null, "null" and lone surrogates stay distinct), headSeq, leaseEpoch (kept after release),
 * leaseExpiresMs, createdAt, updatedAt, lastAppend (token of the last append call).
 */

/** The server's clock in ms since the epoch, as a Lua number (exact below 2^53). */
const SERVER_NOW_MS = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * `stamp` (ISO-8601 UTC with ms, as `Date.prototype.toISOString` writes it) and `stampMs` from the
 * server's clock. Redis's Lua has no date library: days to a civil date by Hinnant's algorithm.
 */
const SERVER_STAMP = `local st = redis.call('TIME')
local stampMs = tonumber(st[1]) * 1000 + math.floor(tonumber(st[2]) / 1000)
local stamp
do
  local secs = math.floor(stampMs / 1000)
  local days = math.floor(secs / 86400)
  local tod = secs - days * 86400
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local day = doy - math.floor((153 * mp + 2) / 5) + 1
  local month = mp < 10 and mp + 3 or mp - 9
  local year = yoe + era * 400 + (month <= 2 and 1 or 0)
  stamp = string.format('%04d-%02d-%02dT%02d:%02d:%02d.%03dZ', year, month, day,
    math.floor(tod / 3600), math.floor(tod / 60) % 60, tod % 60, stampMs % 1000)
end`;

/**
 * Refreshes the optional TTL on both session keys ('0' = no TTL). Inlined: no per-call closures.
 * `leaseLeftMs` (a Lua expression, may use `now`) keeps the keys at least as long as a live
 * lease: a key that expired under a live lease would drop the lease with it (and reset the
 * epoch), letting another worker in while the holder still runs.
 */
const refreshTtl = (ttlArg: string, leaseLeftMs?: string) => `
if ${ttlArg} ~= '0' then${
  leaseLeftMs === undefined
    ? `
  local keep = ${ttlArg}`
    : `
  ${SERVER_NOW_MS}
  local keep = string.format('%.0f', math.max(tonumber(${ttlArg}), ${leaseLeftMs}))`
}
  redis.call('PEXPIRE', KEYS[1], keep)
  redis.call('PEXPIRE', KEYS[2], keep)
end`;

/** How long a Cluster creation's marker holds off prunes of the entries it is adding. */
export const CREATING_MARKER_MS = 60_000;

/**
 * Creates the session hash. Index modes: 'inline' adds the index members in this script (KEYS[3]
 * to KEYS[#KEYS - 1]: the lex indexes, score 0; KEYS[#KEYS]: the activity index, scored by the
 * time). Cluster (the indexes live in other slots): 'ask' writes only the creation marker KEYS[3]
 * (for CREATING_MARKER_MS) and returns {'INDEX'}, so the caller adds the members once; 'done'
 * then creates the session and drops the marker. A prune that finds the marker (or the session)
 * puts the member it removed back, so no prune can drop an entry of a creation in progress. A
 * marker that lapsed (the caller stalled past it) is set again and {'INDEX'} returned, so the
 * caller adds the members again before the session exists.
 */
const createSession = (
  a: Record<
    'id' | 'agent' | 'owner' | 'tenant' | 'state' | 'now' | 'ms' | 'mode' | 'member' | 'incarnation',
    string
  >,
) => `
  if ${a.mode} == 'ask' or (${a.mode} == 'done' and redis.call('EXISTS', KEYS[3]) == 0) then
    redis.call('SET', KEYS[3], '1', 'PX', ${CREATING_MARKER_MS})
    return {'INDEX'}
  end
  if ${a.mode} == 'done' then redis.call('DEL', KEYS[3]) end
  redis.call('HSET', KEYS[1], 'id', ${a.id}, 'agentName', ${a.agent}, 'ownerId', ${a.owner},
    'tenantId', ${a.tenant}, 'state', ${a.state}, 'headSeq', '0', 'createdAt', ${a.now}, 'updatedAt', ${a.now},
    'incarnationId', ${a.incarnation})
  if ${a.mode} == 'inline' then
    for i = 3, #KEYS - 1 do redis.call('ZADD', KEYS[i], 0, ${a.member}) end
    redis.call('ZADD', KEYS[#KEYS], ${a.ms}, ${a.member})
  end`;

/**
 * KEYS: session, messages[, index keys when creating inline | the creation marker on a Cluster]
 * ARGV: 1 expectedSeq, 2 unused (the server stamps its own time; kept so the positions stay),
 *       3 a new incarnation id (kept only if this creates the session), 4 'token'|'none',
 *       5 holderJson, 6 epoch,
 *       7 releaseLease '1'|'0', 8 hasState '1'|'0', 9 stateJson, 10 init agentNameJson,
 *       11 init ownerJson, 12 init tenantJson, 13 init stateJson, 14 ttlMs|'0',
 *       15 index mode, 16 index member, 17 idJson, 18 new headSeq, 19 append token,
 *       20.. message JSON (seq inside)
 * Seqs are compared as decimal text (both sides are written by this package), so the guard
 * costs one HMGET and no number parsing. The append token is unique per `append()` call and
 * kept in `lastAppend`: when ioredis re-sends a script whose reply was lost with a dropped
 * connection (autoResendUnfulfilledCommands), the re-sent copy finds its own token at the head
 * it would have produced and answers OK instead of a false SeqConflictError. A different call,
 * even with identical messages, has another token and gets the conflict.
 * The lease is checked before the seq (after recognising a re-sent copy of this very call), so a
 * fenced writer learns it lost the lease even once its successor appended.
 * Returns {'OK', headSeq} | {'SEQ', storedHead} | {'LEASE'} | {'INDEX'}.
 */
export const APPEND_LUA = `
local s = redis.call('HMGET', KEYS[1], 'headSeq', 'leaseHolder', 'leaseEpoch', 'leaseExpiresMs', 'lastAppend')
local head = s[1] or '0'
if head ~= ARGV[1] and s[5] == ARGV[19] and head == ARGV[18] then return {'OK', head} end
if ARGV[4] == 'token' then
  if s[2] ~= ARGV[5] or s[3] ~= ARGV[6] then return {'LEASE'} end
elseif s[2] then
  ${SERVER_NOW_MS}
  if tonumber(s[4]) > now then return {'LEASE'} end
end
if head ~= ARGV[1] then return {'SEQ', head} end
${SERVER_STAMP}
if not s[1] then${createSession({ id: 'ARGV[17]', agent: 'ARGV[10]', owner: 'ARGV[11]', tenant: 'ARGV[12]', state: 'ARGV[13]', now: 'stamp', ms: 'stampMs', mode: 'ARGV[15]', member: 'ARGV[16]', incarnation: 'ARGV[3]' })}
end
redis.call('RPUSH', KEYS[2], unpack(ARGV, 20))
redis.call('HSET', KEYS[1], 'headSeq', ARGV[18], 'updatedAt', stamp, 'lastAppend', ARGV[19])
if ARGV[8] == '1' then redis.call('HSET', KEYS[1], 'state', ARGV[9]) end
if ARGV[7] == '1' then redis.call('HDEL', KEYS[1], 'leaseHolder', 'leaseExpiresMs') end${refreshTtl(
  'ARGV[14]',
  "(ARGV[7] ~= '1' and s[2] and tonumber(s[4]) or now) - now",
)}
return {'OK', ARGV[18]}
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
 * KEYS: session, messages[, index keys when creating inline | the creation marker on a Cluster]
 * ARGV: 1 holderJson, 2 unused (the server stamps its own time), 3 leaseTtlMs, 4 agentNameJson,
 *       5 ownerJson, 6 tenantJson, 7 stateJson, 8 a new incarnation id (kept only if this
 *       creates the session), 9 ttlMs|'0', 10 index mode,
 *       11 index member, 12 idJson
 * Returns {'OK', epoch, sessionHashFlat} | {'DENIED'} | {'BUSY', msLeft} | {'INDEX'}.
 */
export const ACQUIRE_LUA = `
local s = redis.call('HMGET', KEYS[1], 'headSeq', 'ownerId', 'tenantId', 'leaseHolder', 'leaseExpiresMs')
${SERVER_NOW_MS}
if s[1] then
  if s[2] ~= ARGV[5] or s[3] ~= ARGV[6] then return {'DENIED'} end
  if s[4] and s[4] ~= ARGV[1] and tonumber(s[5]) > now then
    return {'BUSY', string.format('%.0f', tonumber(s[5]) - now)}
  end
else
  ${SERVER_STAMP}${createSession({ id: 'ARGV[12]', agent: 'ARGV[4]', owner: 'ARGV[5]', tenant: 'ARGV[6]', state: 'ARGV[7]', now: 'stamp', ms: 'stampMs', mode: 'ARGV[10]', member: 'ARGV[11]', incarnation: 'ARGV[8]' })}
end
local epoch = redis.call('HINCRBY', KEYS[1], 'leaseEpoch', 1)
redis.call('HSET', KEYS[1], 'leaseHolder', ARGV[1],
  'leaseExpiresMs', string.format('%.0f', now + tonumber(ARGV[3])))${refreshTtl('ARGV[9]', 'tonumber(ARGV[3])')}
return {'OK', epoch, redis.call('HGETALL', KEYS[1])}
`;

/**
 * KEYS: session, messages. ARGV: 1 holderJson, 2 epoch, 3 leaseTtlMs, 4 ttlMs|'0'.
 * Returns the new expiry (ms, server clock) as text when renewed, 0 when the holder/epoch no
 * longer hold the lease.
 */
export const RENEW_LUA = `
local s = redis.call('HMGET', KEYS[1], 'leaseHolder', 'leaseEpoch')
if not s[1] or s[1] ~= ARGV[1] or s[2] ~= ARGV[2] then return 0 end
${SERVER_NOW_MS}
local expires = string.format('%.0f', now + tonumber(ARGV[3]))
redis.call('HSET', KEYS[1], 'leaseExpiresMs', expires)${refreshTtl('ARGV[4]', 'tonumber(ARGV[3])')}
return expires
`;

/** KEYS: session, messages. ARGV: 1 holderJson, 2 epoch, 3 ttlMs|'0'. Returns 1 when released. */
export const RELEASE_LUA = `
local s = redis.call('HMGET', KEYS[1], 'leaseHolder', 'leaseEpoch')
if not s[1] or s[1] ~= ARGV[1] or s[2] ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], 'leaseHolder', 'leaseExpiresMs')${refreshTtl('ARGV[3]')}
return 1
`;

/**
 * Standalone only: removes the session's member from every index it is in, whose names it
 * derives from the stored fields exactly as indexes.ts does (the hash tag of a value is
 * base64url of the UTF-8 of its JSON string body, which is the stored JSON text minus its
 * quotes). Those keys are not declared: allowed on a standalone server, never sent to a Cluster
 * (other slots), where the caller removes the members itself. Arguments are Lua expressions:
 * the index keys' common start (client keyPrefix + store prefix + 'ix:{'), the session's bucket,
 * its member, and the stored agentName, ownerId, tenantId JSON (owner/tenant may be false).
 */
const removeIndexEntries = (
  a: Record<'start' | 'bucket' | 'member' | 'agent' | 'owner' | 'tenant', string>,
) => `
  local alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  local function tag(json)
    local text = string.sub(json, 2, -2)
    local out = {}
    for i = 1, #text, 3 do
      local a, b, c = string.byte(text, i, i + 2)
      local n = a * 65536 + (b or 0) * 256 + (c or 0)
      local digits = c and 4 or (b and 3 or 2)
      for d = 1, digits do
        local six = math.floor(n / 2 ^ (6 * (4 - d))) % 64
        out[#out + 1] = string.sub(alphabet, six + 1, six + 1)
      end
    end
    return table.concat(out)
  end
  local owners = {false}
  local tenants = {false}
  if ${a.owner} and ${a.owner} ~= 'null' then owners[2] = tag(${a.owner}) end
  if ${a.tenant} and ${a.tenant} ~= 'null' then tenants[2] = tag(${a.tenant}) end
  local agents = {false, tag(${a.agent})}
  for _, o in ipairs(owners) do
    for _, t in ipairs(tenants) do
      for _, g in ipairs(agents) do
        local kind, parts = '', ''
        if o then kind, parts = kind .. 'o', parts .. o .. '.' end
        if t then kind, parts = kind .. 't', parts .. t .. '.' end
        if g then kind, parts = kind .. 'g', parts .. g .. '.' end
        if kind == '' then kind = 'a' end
        redis.call('ZREM', ${a.start} .. kind .. '.' .. parts .. ${a.bucket} .. '}', ${a.member})
      end
    end
  end
  redis.call('ZREM', ${a.start} .. 'i.' .. ${a.bucket} .. '}', ${a.member})`;

/**
 * Deletes a session, one atomic script. KEYS: session, messages. ARGV: 1 the index keys' common
 * start (the client's keyPrefix + the store's prefix + 'ix:{'), or '' on a Cluster; 2 the
 * session's bucket; 3 its index member.
 * Standalone (ARGV[1] given): also removes the member from every index the session is in
 * (`removeIndexEntries`), so a deletion is one round trip. On a Cluster the caller removes them.
 * Returns {deletedKeyCount, agentNameJson, ownerJson, tenantJson} (fields false when absent).
 */
export const DELETE_LUA = `
local s = redis.call('HMGET', KEYS[1], 'agentName', 'ownerId', 'tenantId')
local deleted = redis.call('DEL', KEYS[1], KEYS[2])
if ARGV[1] ~= '' and s[1] then${removeIndexEntries({ start: 'ARGV[1]', bucket: 'ARGV[2]', member: 'ARGV[3]', agent: 's[1]', owner: 's[2]', tenant: 's[3]' })}
end
return {deleted, s[1] or false, s[2] or false, s[3] or false}
`;

/**
 * Standalone only (two slots). KEYS: index, session. ARGV: 1 member.
 * Drops an index member whose session is gone (expired by TTL), atomically with the check.
 */
export const PRUNE_INDEX_LUA = `
if redis.call('EXISTS', KEYS[2]) == 0 then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
`;

/**
 * Retention, one session, atomic. KEYS: session, messages. ARGV: 1 idleBefore (ISO); 2, 3, 4 as
 * DELETE_LUA's 1, 2, 3 (index keys' start or '' on a Cluster, bucket, member).
 * Deletes both keys when the last append is before ARGV[1] and no lease is held that is
 * unexpired by the server's clock. Standalone: removes the index entries in the same script, so
 * a re-creation of the id can never land between the deletion and the removal and lose its
 * entries to it. On a Cluster the caller removes them (and puts back what a re-creation needs).
 * Returns {'GONE'} | {'DELETED', agentNameJson, ownerJson, tenantJson} | {'LEASED'} |
 * {'ACTIVE', updatedAt}.
 */
export const RETAIN_LUA = `
local s = redis.call('HMGET', KEYS[1], 'updatedAt', 'leaseHolder', 'leaseExpiresMs', 'agentName', 'ownerId', 'tenantId')
if not s[1] then return {'GONE'} end
if s[1] >= ARGV[1] then return {'ACTIVE', s[1]} end
if s[2] then
  ${SERVER_NOW_MS}
  if tonumber(s[3]) > now then return {'LEASED'} end
end
redis.call('DEL', KEYS[1], KEYS[2])
if ARGV[2] ~= '' then${removeIndexEntries({ start: 'ARGV[2]', bucket: 'ARGV[3]', member: 'ARGV[4]', agent: 's[4]', owner: 's[5]', tenant: 's[6]' })}
end
return {'DELETED', s[4], s[5] or 'null', s[6] or 'null'}
`;
