import type { Cluster, Redis } from 'ioredis';
import {
  ACQUIRE_LUA,
  APPEND_LUA,
  DELETE_LUA,
  LOAD_LUA,
  PRUNE_INDEX_LUA,
  RELEASE_LUA,
  RENEW_LUA,
  RETAIN_LUA,
} from './scripts.ts';

type ScriptArg = string | number;
type ScriptCommand = (numKeys: number, ...args: ScriptArg[]) => Promise<unknown>;

export interface ScriptRunner {
  append(keys: string[], args: ScriptArg[]): Promise<unknown>;
  load(keys: string[], args: ScriptArg[]): Promise<unknown>;
  acquire(keys: string[], args: ScriptArg[]): Promise<unknown>;
  renew(keys: string[], args: ScriptArg[]): Promise<unknown>;
  release(keys: string[], args: ScriptArg[]): Promise<unknown>;
  pruneIndex(keys: string[], args: ScriptArg[]): Promise<unknown>;
  retain(keys: string[], args: ScriptArg[]): Promise<unknown>;
  deleteSession(keys: string[], args: ScriptArg[]): Promise<unknown>;
}

// Versioned names: defineCommand adds methods to the client, which a user may share with
// other code; a later release with different Lua gets different names instead of clobbering.
const SCRIPTS = {
  append: ['agentstoreAppendV3', APPEND_LUA, false],
  load: ['agentstoreLoadV1', LOAD_LUA, true],
  acquire: ['agentstoreAcquireV3', ACQUIRE_LUA, false],
  renew: ['agentstoreRenewV1', RENEW_LUA, false],
  release: ['agentstoreReleaseV1', RELEASE_LUA, false],
  pruneIndex: ['agentstorePruneIndexV1', PRUNE_INDEX_LUA, false],
  retain: ['agentstoreRetainV2', RETAIN_LUA, false],
  deleteSession: ['agentstoreDeleteV2', DELETE_LUA, false],
} as const;

/**
 * Registers the scripts with ioredis' `defineCommand`: the first call on a connection sends
 * EVAL (which caches the script server-side), later calls send EVALSHA, and a NOSCRIPT reply
 * (server restarted or SCRIPT FLUSH) is retried as EVAL. So every call is one command.
 */
export function scriptRunner(client: Redis | Cluster): ScriptRunner {
  const commands = client as unknown as Record<string, ScriptCommand>;
  const bind = (name: string, lua: string, readOnly: boolean) => {
    if (typeof commands[name] !== 'function') client.defineCommand(name, { lua, readOnly });
    return (keys: string[], args: ScriptArg[]) => commands[name]!(keys.length, ...keys, ...args);
  };
  return {
    append: bind(...SCRIPTS.append),
    load: bind(...SCRIPTS.load),
    acquire: bind(...SCRIPTS.acquire),
    renew: bind(...SCRIPTS.renew),
    release: bind(...SCRIPTS.release),
    pruneIndex: bind(...SCRIPTS.pruneIndex),
    retain: bind(...SCRIPTS.retain),
    deleteSession: bind(...SCRIPTS.deleteSession),
  };
}
