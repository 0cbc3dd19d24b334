import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { LlmAdapter, LlmResponse, MessageRecord } from '@agentstore/core';
import {
  type AgentDefinition,
  defineAgent,
  type JsonValue,
  type NewMessage,
  type SessionInit,
  tool,
} from '@agentstore/core';
import { messageByteLength } from '@agentstore/core/store';
import { type ScriptStep, scriptedLlm } from '@agentstore/core/testing';

/** What every benchmarked session is created with (as `run()` creates it). */
export const benchSessionInit = (): SessionInit => ({
  agentName: 'agentstore-bench',
  ownerId: null,
  tenantId: null,
  state: { usage: { inputTokens: 0, outputTokens: 0 } },
});

/** The state `run()` writes with every append: token usage so far. */
export const benchState = (appends: number): JsonValue => ({
  usage: { inputTokens: 10 * appends, outputTokens: 5 * appends },
});

const template = (role: NewMessage['role']): NewMessage => ({
  id: crypto.randomUUID(),
  role,
  content: '',
  ...(role === 'tool' ? { toolCallId: 'call_0000000000', toolName: 'work' } : {}),
  createdAt: new Date().toISOString(),
});

/** A message with a fresh id; `fields` override anything. */
export const benchMessage = (fields: Partial<NewMessage> = {}): NewMessage => ({
  ...template('user'),
  content: 'go',
  ...fields,
});

/** The smallest `--payload` a message can have: an empty tool result's JSON. */
export const MIN_PAYLOAD_BYTES = messageByteLength(template('tool'));

/** A message of exactly `bytes` bytes as `messageByteLength` (the stores' limit check) measures it. */
export function messageOfPayload(bytes: number, role: NewMessage['role'] = 'tool'): NewMessage {
  const base = template(role);
  const padding = bytes - messageByteLength(base);
  if (padding < 0) throw new Error(`a message cannot be smaller than ${messageByteLength(base)} bytes`);
  return { ...base, content: 'x'.repeat(padding) };
}

/** The append the bench times: three messages of `bytes` each, as one tool step's results. */
export const payloadBatch = (bytes: number): NewMessage[] => [
  messageOfPayload(bytes),
  messageOfPayload(bytes),
  messageOfPayload(bytes),
];

const passThrough = {
  '~standard': {
    version: 1 as const,
    vendor: 'agentstore-bench',
    validate: (value: unknown) => ({ value }),
  },
};

export interface BenchLoop {
  agent: AgentDefinition;
  /** A fresh scripted model for one run: `steps` tool steps, then the final answer. */
  llm: () => ReturnType<typeof scriptedLlm>;
}

/**
 * The scripted agent every loop measurement runs: `steps` tool steps (the model asks for one
 * tool call, the tool answers with `payloadBytes` of data), then a final answer. Per step,
 * `run()` appends twice: the assistant message with its call, then the tool result.
 * `beforeWork`, when given, is awaited by the tool before it answers (the floor written from
 * inside the loop, `floorInLoop`).
 */
export function benchLoop(steps: number, payloadBytes: number, beforeWork?: () => Promise<void>): BenchLoop {
  const data = 'x'.repeat(payloadBytes);
  const script: ScriptStep[] = [
    ...Array.from({ length: steps }, (_, n) => ({
      text: `step ${n}`,
      toolCalls: [{ name: 'work', input: { n } }],
    })),
    { text: 'done' },
  ];
  const agent = defineAgent({
    name: 'agentstore-bench',
    instructions: 'Work through the steps.',
    maxIterations: steps + 1,
    tools: {
      work: tool({
        description: 'One step of work.',
        input: passThrough,
        safeToRetry: true,
        handler: beforeWork ? () => beforeWork().then(() => ({ data })) : () => ({ data }),
      }),
    },
  });
  return { agent, llm: () => scriptedLlm(script) };
}

/**
 * A full garbage collection, made callable without `--expose-gc` (the flag is set at run time,
 * then `gc` is read from a fresh context) on first use, not on import. Used before counting a
 * run's step CPU, so the garbage its `load` left (megabytes for a long session) is not
 * collected, at a random step, inside it.
 */
let gc: (() => void) | undefined;
export function collectGarbage(): void {
  if (!gc) {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as () => void;
  }
  gc();
}

/** The model's CPU time so far (µs), for subtracting it from a run's. */
export interface ModelMeter {
  /** Collect the garbage at the first call, before it is counted (see `collectGarbage`). */
  collectFirst: boolean;
  cpuUs: number;
  calls: number;
  /** The main thread's CPU usage (see `threadCpu`) at the first and the last call of the current run. */
  firstCall: NodeJS.CpuUsage | null;
  lastCall: NodeJS.CpuUsage | null;
  /** The model's CPU (µs) before the last call: what lies between the first and the last call. */
  cpuUsAtLastCall: number;
}

const cpuUs = (usage: NodeJS.CpuUsage) => usage.user + usage.system;

/**
 * CPU time of the main thread, where the loop, the stores' client code and an in-process engine
 * (SQLite) run: `process.cpuUsage()` also counts V8's background threads, whose concurrent
 * sweeping after a collection grows with the whole heap (so with a long session's size) and whose
 * JIT compiles come in bursts, neither of them the loop's work. Falls back to the process's.
 */
const threadCpu = (): NodeJS.CpuUsage =>
  (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.() ?? process.cpuUsage();
const cpuSince = (start: NodeJS.CpuUsage): number => {
  const now = threadCpu();
  return now.user - start.user + (now.system - start.system);
};

/**
 * Waits until `due` (a `performance.now()` time), never less. A timer alone can fire up to a
 * millisecond early against `performance.now()` (libuv measures from the loop's cached clock), and
 * how early depends on how much synchronous work ran before it was set — more in a durable run —
 * so a timer-only model would grant a busier loop a shorter model call. The last stretch is
 * checked each loop turn (I/O callbacks still run in between).
 */
export async function waitUntil(due: number, signal: AbortSignal): Promise<void> {
  const remaining = due - performance.now();
  if (remaining <= 0) return;
  try {
    await sleep(remaining, undefined, { signal });
  } catch (error) {
    // The run's own reason (a failed write, the caller's abort), as a model would reject with it.
    throw signal.aborted ? signal.reason : error;
  }
  while (performance.now() < due) {
    signal.throwIfAborted();
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * A model that asks for one `work` call per request for `toolSteps` requests, then answers, after
 * a fixed latency (never shorter: `waitUntil`) — whatever the history holds, so it also serves
 * runs that resume a long seeded session. It meters its own CPU time, so a run's CPU can be
 * counted without it. With `gaps`, it records for every request after a tool step the time from
 * the moment the previous reply was due to this request (ms): what the loop spent on that step
 * (write #1, the tool, sending write #2; and any lateness of the reply, should the loop have been
 * too busy to take it when due).
 */
export function fixedLatencyLlm(
  toolSteps: number,
  latencyMs: number,
  meter?: ModelMeter,
  gaps?: number[],
): LlmAdapter {
  let call = 0;
  let lastDue: number | null = null;
  return {
    async generate({ signal }) {
      const requested = performance.now();
      if (gaps && lastDue !== null) gaps.push(requested - lastDue);
      lastDue = requested + latencyMs;
      if (latencyMs > 0) await waitUntil(lastDue, signal);
      signal.throwIfAborted();
      if (meter?.collectFirst && meter.firstCall === null) collectGarbage();
      const start = threadCpu();
      if (meter) {
        meter.firstCall ??= start;
        meter.lastCall = start;
        meter.cpuUsAtLastCall = meter.cpuUs;
        meter.calls += 1;
      }
      const n = call++;
      const answer: LlmResponse =
        n < toolSteps
          ? {
              text: `step ${n}`,
              toolCalls: [{ name: 'work', input: { n } }],
              usage: { inputTokens: 10, outputTokens: 5 },
            }
          : { text: 'done', toolCalls: [], usage: { inputTokens: 10, outputTokens: 5 } };
      if (meter) meter.cpuUs += cpuSince(start);
      return answer;
    },
  };
}

export const newModelMeter = (options: { collectFirst?: boolean } = {}): ModelMeter => ({
  collectFirst: options.collectFirst ?? false,
  cpuUs: 0,
  calls: 0,
  firstCall: null,
  lastCall: null,
  cpuUsAtLastCall: 0,
});

/**
 * CPU (µs) the process spent between the run's first and last model request, less the model's
 * own: the loop's work for every tool step in between (write #1, the tool, write #2, the next
 * request), without the lease and the load before the first request.
 */
export function loopCpuBetweenModelCalls(meter: ModelMeter): number {
  if (!meter.firstCall || !meter.lastCall) return 0;
  const between = cpuUs(meter.lastCall) - cpuUs(meter.firstCall);
  return Math.max(0, between - meter.cpuUsAtLastCall);
}

/**
 * A tool step as `run()` stores it: write #1, the assistant message with its call; write #2, the
 * tool's result carrying `payloadBytes` of data (the bench agent's tool output).
 */
export function stepMessages(n: number, payloadBytes: number): [NewMessage, NewMessage] {
  const callId = `call_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const createdAt = new Date().toISOString();
  return [
    {
      id: crypto.randomUUID(),
      role: 'assistant',
      content: `step ${n}`,
      toolCalls: [{ id: callId, name: 'work', input: { n } }],
      // run() stores the model call's usage with its message: the floor writes the same bytes.
      usage: { inputTokens: 10, outputTokens: 5 },
      createdAt,
    },
    {
      id: crypto.randomUUID(),
      role: 'tool',
      content: JSON.stringify({ data: 'x'.repeat(payloadBytes) }),
      toolCallId: callId,
      toolName: 'work',
      createdAt,
    },
  ];
}

/** `messages` with seqs from `expectedSeq + 1`, as a floor takes them. */
export const withSeqs = (messages: NewMessage[], expectedSeq: number): MessageRecord[] =>
  messages.map((message, i) => ({ ...message, seq: expectedSeq + i + 1 }));

/** The bench agent with `toolSteps` + 1 iterations allowed. */
export const benchAgent = (
  toolSteps: number,
  payloadBytes: number,
  beforeWork?: () => Promise<void>,
): AgentDefinition => benchLoop(toolSteps, payloadBytes, beforeWork).agent;
