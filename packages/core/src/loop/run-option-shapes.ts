import { InvalidArgumentError } from '../errors.ts';
import type { AgentStore } from '../store/contract.ts';
import { isWellFormedText } from '../store/json-boundary.ts';
import type { AnyTool } from '../tool.ts';

/*
 * The object-valued options of run() (`tools`, `signal`, `store`): checked for shape before the
 * lease is taken or the model called, each with an InvalidArgumentError naming the option. A tool
 * that is not a tool would otherwise turn an approved call into "invalid input, never ran",
 * consuming the human's approval; a signal that is not one would throw a raw TypeError.
 */

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isSchema = (value: unknown): boolean =>
  (typeof value === 'object' || typeof value === 'function') &&
  value !== null &&
  typeof (value as { '~standard'?: { validate?: unknown } })['~standard']?.validate === 'function';

const bad = (argument: string, reason: string) => new InvalidArgumentError({ argument, reason });

/** One tool, copied once (what is checked is what runs, even behind getters). */
function checkTool(value: unknown, path: string): AnyTool {
  if (!isObject(value)) throw bad(path, 'must be a tool made with tool()');
  const copy = { ...value };
  if (typeof copy.handler !== 'function') throw bad(`${path}.handler`, 'must be a function');
  if (!isSchema(copy.input)) throw bad(`${path}.input`, 'must be a Standard Schema (zod, valibot, arktype…)');
  if (copy.output !== undefined && !isSchema(copy.output)) {
    throw bad(`${path}.output`, 'must be a Standard Schema when given');
  }
  if (copy.description !== undefined && typeof copy.description !== 'string') {
    throw bad(`${path}.description`, 'must be a string');
  }
  const approval = copy.needsApproval;
  if (approval !== undefined && typeof approval !== 'boolean' && typeof approval !== 'function') {
    throw bad(`${path}.needsApproval`, 'must be a boolean or a function');
  }
  if (copy.safeToRetry !== undefined && typeof copy.safeToRetry !== 'boolean') {
    throw bad(`${path}.safeToRetry`, 'must be a boolean');
  }
  if (copy.reconcile !== undefined && typeof copy.reconcile !== 'function') {
    throw bad(`${path}.reconcile`, 'must be a function');
  }
  return copy as unknown as AnyTool;
}

function checkToolRecord(record: unknown, path: string, into: Record<string, AnyTool>): void {
  if (record === undefined) return;
  if (!isObject(record)) throw bad(path, 'must be an object of tools keyed by name');
  for (const [name, value] of Object.entries(record)) {
    const at = `${path}[${JSON.stringify(name)}]`;
    if (name.length === 0 || !isWellFormedText(name))
      throw bad(at, 'has a name that is empty or not well-formed');
    into[name] = checkTool(value, at);
  }
}

/** The run's tools: the agent's, overridden by name by `run({ tools })`, each checked and copied once. */
export function checkTools(agentTools: unknown, runTools: unknown): Record<string, AnyTool> {
  const tools: Record<string, AnyTool> = {};
  checkToolRecord(agentTools, 'agent.tools', tools);
  checkToolRecord(runTools, 'tools', tools);
  return tools;
}

/** `signal` must be a real AbortSignal: the run links it with `AbortSignal.any`. */
export function checkSignal(signal: unknown): void {
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw bad('signal', 'must be an AbortSignal (e.g. AbortController#signal or AbortSignal.timeout())');
  }
}

const STORE_METHODS = ['load', 'append', 'acquireLease', 'renewLease', 'releaseLease'] as const;

/** `store` must look like an AgentStore: its limits always, its methods when the run is durable. */
export function checkStoreShape(store: unknown, durable: boolean): void {
  if (store === undefined) return;
  if (!isObject(store)) throw bad('store', 'must be an AgentStore (e.g. postgresStore(...))');
  const limits = (store as Partial<AgentStore>).limits;
  if (!isObject(limits))
    throw bad('store.limits', 'must be an object ({ maxMessageBytes, maxMessagesPerAppend })');
  if (!durable) return;
  if (typeof store.durable !== 'boolean') throw bad('store.durable', 'must be a boolean');
  for (const method of STORE_METHODS) {
    if (typeof store[method] !== 'function') throw bad(`store.${method}`, 'must be a function');
  }
}
