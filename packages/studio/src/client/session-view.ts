import { ApiError, getJson, type MessagesAnswer, type SessionAnswer, sessionPath } from './api.ts';
import { announce, h, statusBadge, time } from './dom.ts';
import { renderDetail } from './message-detail.ts';
import { createMessageStore } from './message-store.ts';
import { createTimeline } from './timeline.ts';

/** How often a live view asks the store for messages after its head (issue 30 replaces this with a stream). */
export const POLL_MS = 1500;

export const sessionHref = (id: string, at: number | null) =>
  `#/session/${encodeURIComponent(id)}${at === null ? '' : `?at=${at}`}`;

function facts(answer: SessionAnswer): HTMLElement {
  const s = answer.session;
  const lease = answer.asOf
    ? `not known at seq ${answer.asOf.seq} (the log does not record leases)`
    : s.lease
      ? `held by ${s.lease.holder} (epoch ${s.lease.epoch}) until ${time(s.lease.expiresAt)}`
      : 'free';
  const rows: [string, Node | string][] = [
    ['Status', statusBadge(answer.status)],
    ['Agent', s.agentName],
    ['Owner', s.ownerId ?? '-'],
    ['Tenant', s.tenantId ?? '-'],
    [
      'Head seq',
      answer.asOf ? `${answer.asOf.seq} (head today ${answer.asOf.headSeqNow})` : String(s.headSeq),
    ],
    ['Lease', lease],
    ['Created', time(s.createdAt)],
    ['Updated', time(s.updatedAt)],
  ];
  if (answer.interruptedCallIds.length)
    rows.push(['Interrupted calls', answer.interruptedCallIds.join(', ')]);
  if (answer.awaitingApprovalCallIds.length)
    rows.push(['Awaiting approval', answer.awaitingApprovalCallIds.join(', ')]);
  const dl = h('dl', { class: 'facts wide', id: 'session-facts' });
  for (const [k, v] of rows) dl.append(h('div', {}, h('dt', {}, k), h('dd', {}, v)));
  // The state the loop keeps (e.g. the session's total usage); a past view shows today's.
  const state = h(
    'details',
    {},
    h('summary', {}, answer.asOf ? "Session state (today's)" : 'Session state'),
    h('pre', {}, JSON.stringify(s.state, null, 2)),
  );
  return h('div', {}, dl, state);
}

/** Renders one session; returns a function that stops its polling. */
export async function renderSession(main: HTMLElement, id: string, at: number | null): Promise<() => void> {
  let answer: SessionAnswer;
  try {
    answer = await getJson<SessionAnswer>(sessionPath(id), { at: at ?? undefined });
  } catch (error) {
    const text =
      error instanceof ApiError && error.status === 404
        ? `Session ${JSON.stringify(id)} not found.`
        : String((error as Error).message);
    main.replaceChildren(
      h('h1', {}, 'Session'),
      h('p', { class: 'error', role: 'alert' }, text),
      h('a', { href: '#/' }, 'Back to sessions'),
    );
    return () => {};
  }
  let total = answer.viewSeq;
  let interrupted: ReadonlySet<string> = new Set(answer.interruptedCallIds);
  const detail = h(
    'div',
    { class: 'detail', 'aria-live': 'polite', id: 'message-detail' },
    h('p', { class: 'note' }, 'Select a message.'),
  );
  const showDetail = (seq: number) => {
    const m = messages.get(seq);
    detail.replaceChildren(
      m
        ? renderDetail(m, messages, interrupted, answer.asOf !== null)
        : h('p', { class: 'note' }, `#${seq} loading…`),
    );
  };
  const messages = createMessageStore(id, at, () => {
    timeline.render();
    showDetail(timeline.active);
  });
  const timeline = createTimeline({
    messages,
    total: () => total,
    interrupted: () => interrupted,
    onSelect: showDetail,
  });

  const seqInput = h('input', {
    name: 'at',
    type: 'number',
    min: '0',
    max: String(answer.session.headSeq),
    value: String(answer.viewSeq),
    inputmode: 'numeric',
  });
  const asOfForm = h(
    'form',
    { class: 'toolbar', 'aria-label': 'View as of a seq' },
    h('label', {}, 'View as of seq', seqInput),
    h('button', { type: 'submit' }, 'View'),
    answer.asOf ? h('a', { href: sessionHref(id, null) }, 'Back to now (live)') : null,
  );
  asOfForm.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = sessionHref(id, Number(seqInput.value));
  });
  const liveNote = h(
    'p',
    { class: 'note', id: 'live-note' },
    answer.asOf
      ? `Viewing the session as it was at seq ${answer.asOf.seq}; the lease then is not known, the state shown is today's.`
      : `Live: the page asks the store for new messages every ${POLL_MS / 1000} s.`,
  );
  const factsBox = h('div', {}, facts(answer));
  main.replaceChildren(
    h('nav', { 'aria-label': 'Breadcrumb', class: 'note' }, h('a', { href: '#/' }, '← Sessions')),
    h('h1', {}, `Session ${id}`),
    factsBox,
    asOfForm,
    liveNote,
    h(
      'div',
      { class: 'layout' },
      h('section', { 'aria-label': 'Timeline' }, timeline.element),
      h('section', { 'aria-label': 'Message detail' }, detail),
    ),
  );
  timeline.render();
  if (total > 0) timeline.select(at === null ? total : Math.min(at, total));
  announce(`Session ${id}: ${answer.status}, ${total} messages`);
  if (answer.asOf) return () => {};

  let stopped = false;
  let timer = 0;
  async function poll() {
    if (stopped) return;
    try {
      if (!document.hidden) {
        const fresh = await getJson<MessagesAnswer>(`${sessionPath(id)}/messages`, {
          afterSeq: total,
          limit: 500,
        });
        const leaseChanged = JSON.stringify(fresh.lease) !== JSON.stringify(answer.session.lease);
        if (fresh.headSeq !== total || leaseChanged) {
          const follow = timeline.atEnd();
          messages.add(fresh.messages);
          answer = await getJson<SessionAnswer>(sessionPath(id));
          total = answer.viewSeq;
          interrupted = new Set(answer.interruptedCallIds);
          factsBox.replaceChildren(facts(answer));
          seqInput.max = String(total);
          if (follow) timeline.scrollToEnd();
          timeline.render();
          showDetail(timeline.active);
          announce(`Session now at seq ${total}, ${answer.status}`);
        }
      }
    } catch (error) {
      liveNote.textContent = `Live updates paused: ${(error as Error).message}`;
    }
    if (!stopped) timer = window.setTimeout(poll, POLL_MS);
  }
  timer = window.setTimeout(poll, POLL_MS);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
