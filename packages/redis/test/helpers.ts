import { randomUUID } from 'node:crypto';
import type { NewMessage, SessionInit } from '@agentstore/core';
import type { Cluster, Command, Redis } from 'ioredis';
import { type IndexKind, indexKeys } from '../src/indexes.ts';

/** A prefix of its own per test, so tests sharing one server (AGENTSTORE_REDIS_URL) never meet. */
export const uniquePrefix = (label: string): string => `t-${label}-${randomUUID().slice(0, 8)}:`;

export const init = (fields: Partial<SessionInit> = {}): SessionInit => ({
  agentName: 'agent',
  ownerId: null,
  tenantId: null,
  state: null,
  ...fields,
});

let counter = 0;
export function msg(fields: Partial<NewMessage> = {}): NewMessage {
  counter += 1;
  return {
    id: `m${counter}-${randomUUID()}`,
    role: 'user',
    content: `content ${counter}`,
    createdAt: new Date().toISOString(),
    ...fields,
  };
}

/**
 * Counts the commands a client writes, by wrapping `sendCommand`. Names are read after the
 * fact: ioredis turns a script's EVALSHA into EVAL only when it writes it to the socket.
 */
export function countCommands(client: Redis): { readonly names: string[]; reset(): void } {
  const commands: Command[] = [];
  const original = client.sendCommand.bind(client);
  client.sendCommand = ((command: Command, ...rest: unknown[]) => {
    commands.push(command);
    return (original as (c: Command, ...r: unknown[]) => unknown)(command, ...rest);
  }) as Redis['sendCommand'];
  return {
    get names() {
      return commands.map((c) => c.name);
    },
    reset() {
      commands.length = 0;
    },
  };
}

/** Entries in one of the store's bucketed lex indexes (default: the index of every session). */
export async function indexEntries(
  client: Redis | Cluster,
  prefix: string,
  kind: IndexKind = 'a',
  value?: string | string[],
): Promise<number> {
  const counts = await Promise.all(
    indexKeys(prefix)
      .lex(kind, value)
      .map((key) => client.zcard(key)),
  );
  return counts.reduce((sum, n) => sum + n, 0);
}
