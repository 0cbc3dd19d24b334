import { redisStore } from '@agentstore/redis';
import { launchRedis } from '@agentstore/servers';
import { Redis } from 'ioredis';
import { readJson, writeJson } from '../corpus-files.ts';
import { type CorpusBackend, freshName } from './backend.ts';

const KEYS_FILE = 'keys.json';
/** The store's default prefix: what most deployments write under. */
const KEY_PREFIX = 'agentstore:';

/** A value's bytes: as text when they are UTF-8 (they always are today), else base64. */
type Bytes = string | { base64: string };

interface KeyDump {
  /** The key without the prefix it was written under. */
  key: string;
  type: 'string' | 'hash' | 'list' | 'set' | 'zset';
  /** Milliseconds left to live when dumped; -1 for none. */
  pttl: number;
  /** string: [value]; hash: [field, value, …]; list: elements; set: members; zset: [member, score, …]. */
  value: Bytes[];
}

interface KeysDump {
  keyPrefix: string;
  keys: KeyDump[];
}

const encode = (bytes: Buffer): Bytes => {
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? text : { base64: bytes.toString('base64') };
};
const decode = (bytes: Bytes): Buffer =>
  typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes.base64, 'base64');

const READ: Record<KeyDump['type'], string[]> = {
  string: ['GET'],
  hash: ['HGETALL'],
  list: ['LRANGE', '0', '-1'],
  set: ['SMEMBERS'],
  zset: ['ZRANGE', '0', '-1', 'WITHSCORES'],
};
const WRITE: Record<KeyDump['type'], string> = {
  string: 'SET',
  hash: 'HSET',
  list: 'RPUSH',
  set: 'SADD',
  zset: 'ZADD',
};

async function readKeys(client: Redis, keyPrefix: string): Promise<KeysDump> {
  const keys: KeyDump[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'COUNT', 500);
    cursor = next;
    for (const key of batch) {
      // The server is fresh: a key outside the prefix means the store wrote one nobody expected.
      if (!key.startsWith(keyPrefix)) throw new Error(`key ${JSON.stringify(key)} is outside ${keyPrefix}`);
      const type = (await client.type(key)) as KeyDump['type'];
      const read = READ[type];
      if (!read) throw new Error(`key ${key} has type ${type}, which the dump does not know`);
      const [command, ...args] = read as [string, ...string[]];
      const reply = (await client.callBuffer(command, key, ...args)) as Buffer | (Buffer | Buffer[])[];
      // ioredis 6 hands ZRANGE WITHSCORES back as [member, score] pairs: flattened, as the wire has it.
      const values = Array.isArray(reply) ? reply.flat() : [reply];
      if (type === 'set') values.sort(Buffer.compare); // SMEMBERS has no order: keep the file stable
      keys.push({
        key: key.slice(keyPrefix.length),
        type,
        pttl: await client.pttl(key),
        value: values.map(encode),
      });
    }
  } while (cursor !== '0');
  keys.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { keyPrefix, keys };
}

export async function redisBackend(): Promise<CorpusBackend> {
  const server = await launchRedis();
  const client = new Redis(server.info.url);
  const removePrefix = async (keyPrefix: string) => {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 500);
      if (keys.length) await client.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  };
  return {
    async capture() {
      if ((await client.dbsize()) !== 0)
        throw new Error('the generator needs an empty Redis (unset AGENTSTORE_REDIS_URL)');
      const store = redisStore({ client }, { keyPrefix: KEY_PREFIX });
      return {
        store,
        dump: async (into) => writeJson(into, KEYS_FILE, await readKeys(client, KEY_PREFIX)),
        async close() {
          await store.close();
          await removePrefix(KEY_PREFIX);
        },
      };
    },
    async restore(from) {
      const dump = readJson<KeysDump>(from, KEYS_FILE);
      const keyPrefix = `golden-${freshName()}:`;
      for (const entry of dump.keys) {
        const key = `${keyPrefix}${entry.key}`;
        const values = entry.value.map(decode);
        // ZADD takes score before member; the dump keeps ZRANGE's member, score order.
        const args =
          entry.type === 'zset'
            ? values.flatMap((_, i) => (i % 2 === 0 ? [values[i + 1]!, values[i]!] : []))
            : values;
        await client.callBuffer(WRITE[entry.type], key, ...args);
        if (entry.pttl > 0) await client.pexpire(key, entry.pttl);
      }
      const store = redisStore({ client }, { keyPrefix });
      // The documented upgrade step (moves sessions of older index layouts): idempotent.
      await store.reindex();
      return {
        store,
        async close() {
          await store.close();
          await removePrefix(keyPrefix);
        },
      };
    },
    async stop() {
      await client.quit();
      await server.stop();
    },
  };
}
