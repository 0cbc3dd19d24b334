import { type AgentStore, foldSession, type MessageRecord } from '@agentstore/core';
import type { RawReader } from '@agentstore/core/testing';
import { TORTURE_FINAL_TEXT, TORTURE_MESSAGE_ID, TORTURE_SCRIPT } from './agent.ts';
import type { LedgerCall } from './ledger.ts';
import type { WorkerLine } from './protocol.ts';

/** What one trial's checks found. Every non-empty `violations` is a bug (or a broken harness). */
export interface TrialFindings {
  violations: string[];
  /** Duplicated messages, tool results, tool calls, or side effects that ran twice. */
  duplicates: number;
  /** Acknowledged messages missing from the store. */
  lost: number;
}

export interface TrialEvidence {
  sessionId: string;
  raw: RawReader;
  store: AgentStore;
  ledgerCalls: LedgerCall[];
  /** Every line of every worker of the trial, per worker. */
  workers: WorkerLine[][];
}

const parse = (content: string): Record<string, unknown> | null => {
  try {
    const value = JSON.parse(content) as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};

/**
 * The invariants every trial must keep, read from the backend directly (raw reader), through the
 * store, and from the ledger of side effects.
 */
export async function checkTrial(evidence: TrialEvidence): Promise<TrialFindings> {
  const { sessionId, raw, store, ledgerCalls, workers } = evidence;
  const violations: string[] = [];
  let duplicates = 0;
  let lost = 0;

  // Stored messages: contiguous seqs 1..head, each id once.
  const session = await raw.session(sessionId);
  const rows = await raw.messages(sessionId);
  if (!session) violations.push('the session is missing (raw reader)');
  rows.forEach((row, i) => {
    if (row.seq !== i + 1) violations.push(`seqs are not contiguous: position ${i + 1} holds seq ${row.seq}`);
  });
  if (session && session.headSeq !== rows.length)
    violations.push(`head seq ${session.headSeq} but ${rows.length} messages stored`);
  const stored = new Map<string, number>();
  for (const row of rows) stored.set(row.id, (stored.get(row.id) ?? 0) + 1);
  for (const [id, count] of stored) {
    if (count > 1) {
      duplicates += count - 1;
      violations.push(`message ${id} stored ${count} times`);
    }
  }

  // Every acknowledged message is there exactly once.
  const acks = workers.flat().filter((line) => line.t === 'ack');
  for (const ack of acks) {
    for (const id of ack.ids) {
      if (!stored.has(id)) {
        lost++;
        violations.push(`acknowledged message ${id} (head ${ack.headSeq}, epoch ${ack.epoch}) is lost`);
      }
    }
  }

  // Fencing: ordered by the seq they landed at, acknowledged appends never go back to an older epoch.
  const byHead = [...acks].sort((a, b) => a.headSeq - b.headSeq);
  for (let i = 1; i < byHead.length; i++) {
    const before = byHead[i - 1]!;
    const after = byHead[i]!;
    if (after.epoch < before.epoch)
      violations.push(
        `append at head ${after.headSeq} from epoch ${after.epoch} after epoch ${before.epoch}`,
      );
    if (after.headSeq === before.headSeq)
      violations.push(`two acknowledged appends ended at head ${after.headSeq}`);
  }
  const epochs = workers.flat().flatMap((line) => (line.t === 'lease' ? [line.epoch] : []));
  if (new Set(epochs).size !== epochs.length) violations.push(`a lease epoch was granted twice: ${epochs}`);

  // Handlers run under one lease at a time: by arrival, epochs never go back.
  for (let i = 1; i < ledgerCalls.length; i++) {
    const before = ledgerCalls[i - 1]!;
    const after = ledgerCalls[i]!;
    if (after.epoch < before.epoch)
      violations.push(
        `${after.tool} (${after.toolCallId}) ran under epoch ${after.epoch} after epoch ${before.epoch}`,
      );
  }

  // The run completed, through the store's own read path, with the scripted shape.
  const loaded = await store.load(sessionId);
  const messages: MessageRecord[] = loaded?.messages ?? [];
  if (messages.map((m) => `${m.seq}:${m.id}`).join() !== rows.map((r) => `${r.seq}:${r.id}`).join())
    violations.push('the store and the raw reader disagree on the stored messages');
  const folded = foldSession(messages);
  if (folded.status !== 'complete' || folded.response !== TORTURE_FINAL_TEXT)
    violations.push(`the run did not complete (status ${folded.status})`);
  const users = messages.filter((m) => m.id === TORTURE_MESSAGE_ID).length;
  if (users !== 1) violations.push(`the user message is stored ${users} times`);
  const assistantTexts = messages.filter((m) => m.role === 'assistant').map((m) => m.content);
  const expectedTexts = TORTURE_SCRIPT.map((step) => step.text ?? '');
  if (assistantTexts.join('\n') !== expectedTexts.join('\n')) {
    if (assistantTexts.length > expectedTexts.length)
      duplicates += assistantTexts.length - expectedTexts.length;
    violations.push(`assistant steps ${JSON.stringify(assistantTexts)} differ from the script`);
  }

  // Every tool call has exactly one result.
  const calls = messages.flatMap((m) => m.toolCalls ?? []);
  const callIds = new Set(calls.map((call) => call.id));
  if (callIds.size !== calls.length) {
    duplicates += calls.length - callIds.size;
    violations.push('a tool-call id appears in two assistant messages');
  }
  const results = new Map<string, MessageRecord[]>();
  for (const m of messages) {
    if (m.role !== 'tool' || m.toolCallId === undefined) continue;
    results.set(m.toolCallId, [...(results.get(m.toolCallId) ?? []), m]);
    if (!callIds.has(m.toolCallId))
      violations.push(`result ${m.id} answers no stored call (${m.toolCallId})`);
  }
  for (const call of calls) {
    const found = results.get(call.id) ?? [];
    if (found.length === 0) violations.push(`tool call ${call.id} (${call.name}) has no result`);
    if (found.length > 1) {
      duplicates += found.length - 1;
      violations.push(`tool call ${call.id} (${call.name}) has ${found.length} results`);
    }
  }

  // Side effects: at most once where nothing else protects them, and results tell the truth.
  const ledgerBy = new Map<string, LedgerCall[]>();
  for (const call of ledgerCalls)
    ledgerBy.set(call.toolCallId, [...(ledgerBy.get(call.toolCallId) ?? []), call]);
  for (const call of calls) {
    const effects = ledgerBy.get(call.id) ?? [];
    const result = results.get(call.id)?.[0];
    const body = result ? parse(result.content) : null;
    if (call.name === 'notify') {
      if (effects.length > 1) {
        duplicates += effects.length - 1;
        violations.push(
          `notify ${call.id} (no retry, not idempotent) ran ${effects.length} times: pids ${effects.map((e) => e.pid)}`,
        );
      }
      if (result && result.kind === undefined && !effects.some((e) => e.effectId === body?.notified))
        violations.push(`notify ${call.id} reports ${String(body?.notified)}, which the ledger never saw`);
    }
    if (call.name === 'charge') {
      const fresh = effects.filter((e) => !e.replayed);
      if (fresh.length > 1) {
        duplicates += fresh.length - 1;
        violations.push(`charge ${call.id} charged ${fresh.length} times`);
      }
      if (result && (result.kind !== undefined || body?.chargeId !== fresh[0]?.effectId))
        violations.push(`charge ${call.id} result ${result.content} does not match the ledger`);
    }
    if (call.name === 'lookup' && result) {
      if (result.kind !== undefined)
        violations.push(`lookup ${call.id} (safeToRetry) ended in ${result.kind}`);
      else if (!effects.some((e) => e.effectId === body?.value))
        violations.push(`lookup ${call.id} reports ${String(body?.value)}, which the ledger never saw`);
    }
  }
  return { violations, duplicates, lost };
}
