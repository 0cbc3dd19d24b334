import type { MessageView, Part, Usage } from './api.ts';
import { badge, h, time } from './dom.ts';
import type { MessageStore } from './message-store.ts';

const ORIGINS: Record<string, string> = {
  handler: 'handler ran',
  reconciled: 'reconciled (reconcile found the effect had happened)',
  'durability-error': 'durability error (interrupted, neither reconciled nor re-invoked)',
  rejected: 'rejected by a human',
  cancelled: 'cancelled before it started',
  'invalid-call': 'invalid call (never ran)',
};

export function originText(origin: MessageView['origin']): string {
  if (!origin) return 'origin not recorded';
  return `${origin.via}${origin.attempt > 0 ? `, attempt ${origin.attempt}` : ''}`;
}

export function usageText(usage: Usage | undefined): string | null {
  if (!usage) return null;
  const bits = [`${usage.inputTokens ?? '?'} in`, `${usage.outputTokens ?? '?'} out`];
  if (usage.reasoningTokens) bits.push(`${usage.reasoningTokens} reasoning`);
  if (usage.cachedInputTokens) bits.push(`${usage.cachedInputTokens} cached`);
  if (usage.cacheWriteTokens) bits.push(`${usage.cacheWriteTokens} cache-write`);
  return `${bits.join(' · ')}${usage.modelId ? ` · ${usage.modelId}` : ''}`;
}

const json = (value: unknown) => h('pre', {}, JSON.stringify(value, null, 2));

/** A file part: images inline from base64; a PDF opens from a blob; a URL is a link, never fetched. */
function filePart(part: Part): HTMLElement {
  const mediaType = String(part.mediaType ?? 'application/octet-stream');
  const name = typeof part.filename === 'string' ? part.filename : mediaType;
  const data = typeof part.data === 'string' ? part.data : null;
  const box = h('div', { class: 'call' }, h('strong', {}, `${part.type}: ${name}`), ' ', badge(mediaType));
  if (data !== null && mediaType.startsWith('image/')) {
    box.append(
      h('div', {}, h('img', { src: `data:${mediaType};base64,${data}`, alt: `${name} (stored image)` })),
    );
  } else if (data !== null && mediaType === 'application/pdf') {
    const open = h(
      'button',
      { type: 'button' },
      `Open PDF (${Math.round((data.length * 3) / 4 / 1024)} KiB)`,
    );
    open.addEventListener('click', () => {
      const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
      const frame = h('iframe', { title: `${name} preview`, width: '100%', height: '360' });
      frame.src = URL.createObjectURL(new Blob([bytes], { type: 'application/pdf' }));
      open.replaceWith(frame);
    });
    box.append(h('div', {}, open));
  } else if (typeof part.url === 'string') {
    box.append(
      h('div', {}, h('a', { href: part.url, rel: 'noreferrer noopener', target: '_blank' }, part.url)),
    );
  } else if (data !== null) {
    box.append(h('p', { class: 'note' }, `${Math.round((data.length * 3) / 4)} bytes (base64)`));
  }
  return box;
}

function renderPart(part: Part, message: MessageView): HTMLElement {
  if (part.type === 'text') return h('pre', {}, String(part.text ?? ''));
  if (part.type === 'reasoning') {
    const text = String(part.text ?? '');
    return h(
      'details',
      { class: 'call' },
      h('summary', {}, text ? `Reasoning (${text.length} characters)` : 'Reasoning (redacted or encrypted)'),
      text ? h('pre', {}, text) : h('p', { class: 'note' }, 'Only the provider can read it.'),
    );
  }
  if (part.type === 'file' || part.type === 'reasoning-file') return filePart(part);
  if (part.type === 'tool-call') {
    const call = message.toolCalls?.find((c) => c.id === part.toolCallId);
    return h('p', { class: 'note' }, `tool call ${call?.name ?? ''} [${String(part.toolCallId)}] (below)`);
  }
  return h('div', { class: 'call' }, h('strong', {}, part.type), json(part));
}

/** The whole of one message: parts, calls with inputs and keys, result origin, usage, times. */
export function renderDetail(
  message: MessageView,
  messages: MessageStore,
  interrupted: ReadonlySet<string>,
  asOf: boolean,
): HTMLElement {
  const usage = usageText(message.usage);
  const facts = h(
    'dl',
    { class: 'facts' },
    h('dt', {}, 'Seq'),
    h('dd', {}, String(message.seq)),
    h('dt', {}, 'Role'),
    h('dd', {}, message.role + (message.kind ? ` (${message.kind})` : '')),
    h('dt', {}, 'Written'),
    h('dd', {}, time(message.createdAt)),
    h('dt', {}, 'Message id'),
    h('dd', {}, h('code', {}, message.id)),
  );
  if (usage) facts.append(h('dt', {}, 'Usage'), h('dd', {}, usage));
  if (message.role === 'tool') {
    facts.append(
      h('dt', {}, 'Result of'),
      h('dd', {}, `${message.toolName ?? '?'} [${message.toolCallId ?? '?'}]`),
      h('dt', {}, 'Origin'),
      h(
        'dd',
        { class: `o-${message.origin?.via ?? 'none'}` },
        ORIGINS[message.origin?.via ?? ''] ?? originText(message.origin),
      ),
      h('dt', {}, 'Attempt'),
      h('dd', {}, String(message.origin?.attempt ?? '-')),
      h('dt', {}, 'Idempotency key'),
      h('dd', {}, h('code', {}, message.idempotencyKey ?? '-')),
    );
  }
  const body = h(
    'section',
    { 'aria-label': `Message ${message.seq}` },
    h('h2', {}, `#${message.seq} ${message.role}`),
    facts,
  );
  if (message.parts?.length) for (const part of message.parts) body.append(renderPart(part, message));
  else if (message.content) body.append(h('pre', {}, message.content));
  for (const call of message.toolCalls ?? []) {
    const resultSeq = messages.resultSeq(call.id);
    const result = resultSeq === undefined ? undefined : messages.get(resultSeq);
    const stuck = interrupted.has(call.id);
    body.append(
      h(
        'div',
        { class: `call${stuck ? ' interrupted' : ''}` },
        h('strong', {}, `${call.name}`),
        ' ',
        h('code', {}, `[${call.id}]`),
        stuck ? badge(asOf ? 'no result at this seq' : 'INTERRUPTED: no result', 's-interrupted') : null,
        h('div', { class: 'note' }, 'Idempotency key: ', h('code', {}, call.idempotencyKey)),
        json(call.input),
        result
          ? h(
              'p',
              {},
              `Result #${result.seq}: `,
              badge(originText(result.origin), `o-${result.origin?.via ?? ''}`),
            )
          : h(
              'p',
              { class: 'note' },
              stuck
                ? 'Resolved on the next run (reconcile, retry or a durability error).'
                : 'Result not loaded or not yet written.',
            ),
      ),
    );
  }
  return body;
}
