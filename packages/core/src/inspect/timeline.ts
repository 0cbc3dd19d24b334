import type { MessageRecord } from '../records.ts';
import type { LoadResult } from '../store/contract.ts';
import type { LoadResultAt } from './session-at.ts';
import { APPROVAL_DECIDED, APPROVAL_REQUESTED, foldSession } from './session-fold.ts';

const MAX_TEXT = 100;

const clip = (text: string) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_TEXT ? `${flat.slice(0, MAX_TEXT - 1)}…` : flat;
};

const RESULT_LABELS: Record<string, string> = {
  'tool-durability-error': 'DURABILITY ERROR',
  'tool-error': 'error',
  'tool-input-error': 'invalid input',
  'tool-output-error': 'invalid output',
  'tool-approval-rejected': 'rejected',
  'tool-cancelled': 'cancelled',
};

/** Words for each stored `origin.via` (see `ResultOrigin`); an unknown value is shown as is. */
const ORIGIN_LABELS: Record<string, string> = {
  reconciled: 'reconciled',
  'durability-error': 'durability error',
  rejected: 'rejected by approval',
  cancelled: 'cancelled',
  'invalid-call': 'invalid call',
};

/**
 * How a result was obtained, from its stored `origin`: the first run of its handler, a
 * re-invocation after a crash (with its attempt), reconciled, a durability error… Sessions written
 * before results recorded it have none: then nothing is shown.
 */
export function describeOrigin(result: MessageRecord): string | null {
  const origin = result.origin as { via?: unknown; attempt?: unknown } | undefined;
  if (typeof origin !== 'object' || origin === null || typeof origin.via !== 'string') return null;
  const attempt = typeof origin.attempt === 'number' ? origin.attempt : 1;
  if (origin.via === 'handler')
    return attempt > 1 ? `re-invoked after a crash, attempt ${attempt}` : 'first run';
  const label = ORIGIN_LABELS[origin.via] ?? origin.via;
  return attempt > 1 ? `${label}, attempt ${attempt}` : label;
}

/** What a message holds besides its text: reasoning (collapsed to a size), files, hosted calls, usage. */
function describeExtras(m: MessageRecord): string {
  const extras: string[] = [];
  for (const part of m.parts ?? []) {
    if (part.type === 'reasoning')
      extras.push(`reasoning ${part.text.length} chars${part.providerOptions ? ', signed' : ''}`);
    else if (part.type === 'file' || part.type === 'reasoning-file') {
      const where =
        part.url !== undefined ? part.url : `${Math.floor(((part.data ?? '').length * 3) / 4)} bytes`;
      extras.push(`file ${part.mediaType} (${where})`);
    } else if (part.type === 'provider-tool-call')
      extras.push(`hosted ${part.toolName} [${part.toolCallId}]`);
  }
  const u = m.usage;
  if (u)
    extras.push(`${u.inputTokens} in / ${u.outputTokens} out tokens${u.modelId ? ` (${u.modelId})` : ''}`);
  return extras.length ? `  [${extras.join('; ')}]` : '';
}

function describeResult(result: MessageRecord | null): string {
  if (!result) return '… no result';
  const label = RESULT_LABELS[result.kind ?? ''] ?? 'ok';
  const origin = describeOrigin(result);
  return `#${result.seq} ${label}${origin === null ? '' : ` (${origin})`} ${clip(result.content)}`;
}

/**
 * A session as a readable tree: each message by seq, each tool call under its assistant
 * message with its result (and how it was obtained, when recorded), approvals and the lease.
 * What `agentstore inspect` prints; a view from `loadSessionAt` says what it cannot know.
 */
export function renderTimeline(loaded: LoadResult | LoadResultAt, now = Date.now()): string {
  const { session, messages } = loaded;
  const asOf = 'asOf' in loaded ? loaded.asOf : null;
  const folded = foldSession(messages, session);
  const lease = asOf
    ? `not known at seq ${asOf.seq} (the log does not record leases)`
    : session.lease
      ? `held by ${session.lease.holder} (epoch ${session.lease.epoch}) until ${session.lease.expiresAt}` +
        (Date.parse(session.lease.expiresAt) <= now ? ' — expired' : '')
      : 'free';
  const updated = asOf
    ? `updated ${session.updatedAt} (time of seq ${asOf.seq}; head today ${asOf.headSeqNow})`
    : `updated ${session.updatedAt}`;
  const lines = [
    `session ${JSON.stringify(session.id)}  agent ${session.agentName}  owner ${session.ownerId ?? '-'}  tenant ${session.tenantId ?? '-'}`,
    `head seq ${session.headSeq}  created ${session.createdAt}  ${updated}`,
    `lease ${lease}`,
    `status ${folded.status}${folded.response !== null ? `: ${clip(folded.response)}` : ''}`,
  ];
  const calls = new Map(folded.toolCalls.map((t) => [t.call.id, t]));
  for (const m of messages) {
    if (m.role === 'tool') continue; // shown under the call it answers
    if (m.kind === APPROVAL_REQUESTED) {
      lines.push(
        `#${m.seq} approval requested for ${(JSON.parse(m.content).toolCallIds as string[]).join(', ')}`,
      );
      continue;
    }
    if (m.kind === APPROVAL_DECIDED) {
      const d = JSON.parse(m.content) as { toolCallId: string; approve: boolean; reason?: string };
      lines.push(
        `#${m.seq} ${d.approve ? 'approved' : 'rejected'} ${d.toolCallId}${d.reason ? `: ${clip(d.reason)}` : ''}`,
      );
      continue;
    }
    lines.push(`#${m.seq} ${m.role.padEnd(9)} ${clip(m.content)}${describeExtras(m)}`);
    const own = m.toolCalls ?? [];
    own.forEach((call, i) => {
      const branch = i === own.length - 1 ? '└─' : '├─';
      const result = calls.get(call.id)?.result ?? null;
      lines.push(
        `    ${branch} ${call.name}(${clip(JSON.stringify(call.input))}) [${call.id}] → ${describeResult(result)}`,
      );
    });
  }
  for (const call of folded.awaitingApproval) lines.push(`waiting for approval: ${call.name} [${call.id}]`);
  for (const call of folded.interruptedCalls)
    lines.push(`interrupted, resolved on next run: ${call.name} [${call.id}]`);
  return `${lines.join('\n')}\n`;
}
