import type { MessageView } from './api.ts';
import { badge, clip, h, time } from './dom.ts';
import { originText, usageText } from './message-detail.ts';
import type { MessageStore } from './message-store.ts';

const ROW_H = 64;
const OVERSCAN = 8;

export interface TimelineOptions {
  messages: MessageStore;
  total: () => number;
  interrupted: () => ReadonlySet<string>;
  onSelect: (seq: number) => void;
}

function rowText(
  m: MessageView,
  interrupted: ReadonlySet<string>,
): { head: HTMLElement[]; text: string; stuck: boolean } {
  const head: HTMLElement[] = [
    h('span', { class: 'role' }, m.role),
    h('span', { class: 'muted' }, time(m.createdAt)),
  ];
  let stuck = false;
  if (m.kind) head.push(badge(m.kind));
  if (m.role === 'tool') {
    head.push(badge(originText(m.origin), `o-${m.origin?.via ?? ''}`));
    head.push(
      h('span', { class: 'muted' }, `${m.toolName ?? ''} · key ${m.idempotencyKey?.slice(11, 19) ?? '-'}…`),
    );
  }
  for (const call of m.toolCalls ?? []) {
    const isStuck = interrupted.has(call.id);
    stuck ||= isStuck;
    head.push(badge(`${call.name}${isStuck ? ' — INTERRUPTED' : ''}`, isStuck ? 's-interrupted' : ''));
  }
  if (m.parts?.some((p) => p.type === 'reasoning')) head.push(badge('reasoning'));
  if (m.parts?.some((p) => p.type === 'file')) head.push(badge('file'));
  const usage = usageText(m.usage);
  if (usage) head.push(h('span', { class: 'muted' }, usage));
  const text =
    m.content ||
    (m.toolCalls?.length ? m.toolCalls.map((c) => `${c.name}(${JSON.stringify(c.input)})`).join(' ') : '');
  return { head, text: clip(text), stuck };
}

/**
 * A virtualised list of a session's messages: a spacer as tall as all of them, and only the
 * rows in view (plus a few) in the DOM. Fixed row height keeps scrolling O(1) at any length.
 * Keyboard: the list is one tab stop (a listbox); arrows, Page Up/Down, Home and End move the
 * selection, which the detail panel follows.
 */
export function createTimeline(options: TimelineOptions) {
  const spacer = h('div', { class: 'spacer' });
  const list = h(
    'div',
    { class: 'timeline', role: 'listbox', tabindex: '0', 'aria-label': 'Messages, oldest first' },
    spacer,
  );
  let active = 1;
  let frame = 0;

  function render() {
    frame = 0;
    const total = options.total();
    spacer.style.height = `${total * ROW_H}px`;
    const first = Math.max(1, Math.floor(list.scrollTop / ROW_H) + 1 - OVERSCAN);
    const last = Math.min(total, Math.ceil((list.scrollTop + list.clientHeight) / ROW_H) + OVERSCAN);
    options.messages.ensure(first, last, total);
    const interrupted = options.interrupted();
    const rows: HTMLElement[] = [];
    for (let seq = first; seq <= last; seq++) {
      const m = options.messages.get(seq);
      const row = h('div', {
        class: 'row',
        role: 'option',
        id: `msg-${seq}`,
        'aria-selected': seq === active ? 'true' : 'false',
        'aria-posinset': String(seq),
        'aria-setsize': String(total),
        'data-seq': String(seq),
      });
      row.style.top = `${(seq - 1) * ROW_H}px`;
      if (m) {
        const { head, text, stuck } = rowText(m, interrupted);
        if (stuck) row.classList.add('interrupted');
        row.append(
          h('div', { class: 'head' }, h('span', { class: 'muted' }, `#${seq}`), ...head),
          h('div', { class: 'text' }, text),
        );
      } else row.append(h('div', { class: 'head muted' }, `#${seq} loading…`));
      rows.push(row);
    }
    spacer.replaceChildren(...rows);
    if (total > 0) list.setAttribute('aria-activedescendant', `msg-${active}`);
    else list.removeAttribute('aria-activedescendant');
  }

  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(render);
  };

  function select(seq: number) {
    const total = options.total();
    if (total === 0) return;
    active = Math.min(Math.max(1, seq), total);
    // The spacer must be as tall as the list before scrolling, or the browser clamps scrollTop.
    spacer.style.height = `${total * ROW_H}px`;
    const top = (active - 1) * ROW_H;
    if (top < list.scrollTop) list.scrollTop = top;
    else if (top + ROW_H > list.scrollTop + list.clientHeight)
      list.scrollTop = top + ROW_H - list.clientHeight;
    render();
    options.onSelect(active);
  }

  list.addEventListener('scroll', schedule);
  list.addEventListener('click', (event) => {
    const row = (event.target as HTMLElement).closest<HTMLElement>('[data-seq]');
    if (row) {
      list.focus();
      select(Number(row.dataset.seq));
    }
  });
  list.addEventListener('keydown', (event) => {
    const pageRows = Math.max(1, Math.floor(list.clientHeight / ROW_H) - 1);
    const moves: Record<string, number> = {
      ArrowDown: active + 1,
      ArrowUp: active - 1,
      PageDown: active + pageRows,
      PageUp: active - pageRows,
      Home: 1,
      End: options.total(),
    };
    const to = moves[event.key];
    if (to === undefined) return;
    event.preventDefault();
    select(to);
  });

  return {
    element: list,
    render: schedule,
    select,
    get active() {
      return active;
    },
    /** True when the last row is in view: live updates then keep following the head. */
    atEnd: () => list.scrollTop + list.clientHeight >= options.total() * ROW_H - ROW_H,
    scrollToEnd() {
      list.scrollTop = options.total() * ROW_H;
      schedule();
    },
  };
}
