import type { Cluster, Redis } from 'ioredis';

/**
 * `AOF_DISABLED`: appendonly no (a restart loses acknowledged appends). `AOF_FSYNC_RELAXED`:
 * appendfsync everysec (a machine crash may lose about 1 s). `AOF_FSYNC_OS`: appendfsync no (the
 * OS decides when). `DURABILITY_UNVERIFIED`: the server refused CONFIG GET, so nothing is known.
 * `NODE_UNREACHABLE`: the node (or, with `node: null`, the whole Cluster) did not answer (down,
 * failing over, a network problem): a connection problem, not a verdict on durability. It serves
 * no writes, and the next lease asks again (at most once a second).
 */
export type RedisStoreWarningCode =
  | 'AOF_DISABLED'
  | 'AOF_FSYNC_RELAXED'
  | 'AOF_FSYNC_OS'
  | 'DURABILITY_UNVERIFIED'
  | 'NODE_UNREACHABLE';

export interface RedisStoreWarning {
  code: RedisStoreWarningCode;
  message: string;
  /** host:port of the server the warning is about, when known. */
  node: string | null;
}

export interface DurabilityReport {
  /** True when every server checked runs `appendonly yes` + `appendfsync always`. */
  verified: boolean;
  warnings: RedisStoreWarning[];
}

/** CONFIG GET replies as a flat array (RESP2) or a map (RESP3); both become a field map. */
function configFields(reply: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (Array.isArray(reply)) {
    for (let i = 0; i + 1 < reply.length; i += 2) out.set(String(reply[i]), String(reply[i + 1]));
  } else if (reply instanceof Map) {
    for (const [k, v] of reply) out.set(String(k), String(v));
  } else if (typeof reply === 'object' && reply !== null) {
    for (const [k, v] of Object.entries(reply)) out.set(k, String(v));
  }
  return out;
}

function nodeName(client: Redis): string | null {
  const { host, port } = client.options;
  return host && port ? `${host}:${port}` : null;
}

async function checkNode(client: Redis): Promise<RedisStoreWarning[]> {
  const node = nodeName(client);
  let fields: Map<string, string>;
  try {
    fields = configFields(await client.config('GET', 'append*'));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    // A reply error is the server refusing (ACL, renamed CONFIG); anything else is the network.
    if ((error as { name?: unknown } | null)?.name !== 'ReplyError') {
      return [
        {
          code: 'NODE_UNREACHABLE',
          node,
          message: `@agentstore/redis could not reach ${node ?? 'the server'} to check durability (${reason}); it is checked again on the next lease.`,
        },
      ];
    }
    return [
      {
        code: 'DURABILITY_UNVERIFIED',
        node,
        message:
          `@agentstore/redis could not run CONFIG GET on ${node ?? 'the server'} (${reason}), so it cannot ` +
          'check durability. Acknowledged appends survive a crash only with appendonly yes and ' +
          'appendfsync always; make sure the server is configured that way.',
      },
    ];
  }
  const appendonly = fields.get('appendonly');
  const appendfsync = fields.get('appendfsync');
  if (appendonly !== 'yes') {
    return [
      {
        code: 'AOF_DISABLED',
        node,
        message:
          `@agentstore/redis: ${node ?? 'the server'} runs appendonly ${appendonly ?? '(unknown)'}; acknowledged ` +
          'appends are lost if Redis crashes or restarts. Set appendonly yes and appendfsync always.',
      },
    ];
  }
  if (appendfsync !== 'always') {
    return [
      {
        code: appendfsync === 'everysec' ? 'AOF_FSYNC_RELAXED' : 'AOF_FSYNC_OS',
        node,
        message:
          `@agentstore/redis: ${node ?? 'the server'} runs appendfsync ${appendfsync ?? '(unknown)'}; a machine crash ` +
          `can lose acknowledged appends (${appendfsync === 'everysec' ? 'up to about 1 s of them' : 'however many the OS had not flushed'}). ` +
          'Set appendfsync always for the full guarantee.',
      },
    ];
  }
  return [];
}

/**
 * Asks the server, or every node of a Cluster (masters and replicas: a replica becomes the master
 * after a failover), for its AOF settings. Never throws: a server that refuses is
 * DURABILITY_UNVERIFIED, one that cannot be reached NODE_UNREACHABLE.
 */
export async function checkDurability(client: Redis | Cluster): Promise<DurabilityReport> {
  let warnings: RedisStoreWarning[];
  if (client.isCluster) {
    const cluster = client as Cluster;
    // Waits until the slot map is known, so nodes() is filled. If it fails, the nodes known so
    // far (if any) still answer for themselves; none known is the Cluster being out of reach.
    const reached = await cluster.ping().then(
      () => null,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    const nodes = cluster.nodes('all');
    if (reached !== null && nodes.length === 0) {
      warnings = [
        {
          code: 'NODE_UNREACHABLE',
          node: null,
          message: `@agentstore/redis could not reach the cluster to check durability (${reached}); it is checked again on the next lease.`,
        },
      ];
    } else {
      warnings = (await Promise.all(nodes.map(checkNode))).flat();
    }
  } else {
    warnings = await checkNode(client as Redis);
  }
  return { verified: warnings.length === 0, warnings };
}

/** What a store requires of the server's persistence before it runs anything. */
export type RedisDurability = 'fsync-always' | 'fsync-everysec' | 'accept-loss';

/** The warnings of a report that break `required`; none means the store may claim durability. */
export function blockingWarnings(report: DurabilityReport, required: RedisDurability): RedisStoreWarning[] {
  if (required === 'accept-loss') return [];
  return report.warnings.filter(
    (w) =>
      w.code !== 'NODE_UNREACHABLE' && !(required === 'fsync-everysec' && w.code === 'AOF_FSYNC_RELAXED'),
  );
}
