import { getJson, type Info, type SessionRow } from './api.ts';
import { announce, h, STATUS_LABELS, statusBadge, time } from './dom.ts';

interface Filters {
  owner: string;
  tenant: string;
  agent: string;
  status: string;
}

/** What the list shows: kept across visits to a session, so "back" returns to the same page. */
const state = {
  filters: { owner: '', tenant: '', agent: '', status: '' } as Filters,
  cursors: [null] as (string | null)[],
};

export const sessionHash = (id: string) => `#/session/${encodeURIComponent(id)}`;

function field(label: string, name: keyof Filters, info: Info): HTMLLabelElement {
  const fixed = name === 'owner' ? info.scope.ownerId : name === 'tenant' ? info.scope.tenantId : undefined;
  const input = h('input', {
    name,
    type: 'text',
    value: fixed ?? state.filters[name],
    disabled: fixed !== undefined,
    autocomplete: 'off',
  });
  return h('label', {}, label, input);
}

export async function renderList(main: HTMLElement, info: Info): Promise<void> {
  const status = h('select', { name: 'status' }, h('option', { value: '' }, 'any'));
  for (const s of info.statuses) status.append(h('option', { value: s }, STATUS_LABELS[s] ?? s));
  status.value = state.filters.status;
  const filters = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter sessions' },
    field('Owner', 'owner', info),
    field('Tenant', 'tenant', info),
    field('Agent', 'agent', info),
    h('label', {}, 'Status', status),
    h('button', { type: 'submit' }, 'Apply filters'),
  );
  const findInput = h('input', { name: 'id', type: 'text', required: true, autocomplete: 'off' });
  const find = h(
    'form',
    { class: 'find', role: 'search', 'aria-label': 'Find a session by id' },
    h('label', {}, 'Session id', findInput),
    h('button', { type: 'submit' }, 'Open'),
  );
  const results = h('section', { 'aria-labelledby': 'sessions-title' });
  main.replaceChildren(h('h1', { id: 'sessions-title' }, 'Sessions'), find, filters, results);

  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(filters);
    state.filters = {
      owner: String(data.get('owner') ?? ''),
      tenant: String(data.get('tenant') ?? ''),
      agent: String(data.get('agent') ?? ''),
      status: String(data.get('status') ?? ''),
    };
    state.cursors = [null];
    void load();
  });
  find.addEventListener('submit', (event) => {
    event.preventDefault();
    const id = findInput.value.trim();
    if (id) location.hash = sessionHash(id);
  });

  async function load(): Promise<void> {
    const cursor = state.cursors.at(-1) ?? undefined;
    results.replaceChildren(h('p', { class: 'note' }, 'Loading…'));
    try {
      const page = await getJson<{ sessions: SessionRow[]; nextCursor: string | null; scanned: number }>(
        '/api/sessions',
        { ...state.filters, cursor, limit: 25 },
      );
      renderPage(page);
    } catch (error) {
      results.replaceChildren(h('p', { class: 'error', role: 'alert' }, String((error as Error).message)));
    }
  }

  function renderPage(page: { sessions: SessionRow[]; nextCursor: string | null; scanned: number }) {
    const pageNumber = state.cursors.length;
    const prev = h('button', { type: 'button', disabled: pageNumber === 1 }, 'Previous page');
    const next = h('button', { type: 'button', disabled: page.nextCursor === null }, 'Next page');
    prev.addEventListener('click', () => {
      state.cursors.pop();
      void load();
    });
    next.addEventListener('click', () => {
      state.cursors.push(page.nextCursor);
      void load();
    });
    const body = h('tbody');
    for (const s of page.sessions) {
      const lease = s.lease ? `${s.lease.holder} until ${time(s.lease.expiresAt)}` : '-';
      body.append(
        h(
          'tr',
          {},
          h('td', { class: 'id', 'data-label': 'Session' }, h('a', { href: sessionHash(s.id) }, s.id)),
          h('td', { 'data-label': 'Status' }, statusBadge(s.status)),
          h('td', { 'data-label': 'Agent' }, s.agentName),
          h('td', { 'data-label': 'Owner' }, s.ownerId ?? '-'),
          h('td', { 'data-label': 'Tenant' }, s.tenantId ?? '-'),
          h('td', { 'data-label': 'Messages' }, String(s.headSeq)),
          h('td', { 'data-label': 'Updated' }, time(s.updatedAt)),
          h('td', { 'data-label': 'Lease' }, lease),
        ),
      );
    }
    const head = h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['Session', 'Status', 'Agent', 'Owner', 'Tenant', 'Messages', 'Updated', 'Lease'].map((t) =>
          h('th', { scope: 'col' }, t),
        ),
      ),
    );
    const summary = `Page ${pageNumber}: ${page.sessions.length} shown of ${page.scanned} listed${state.filters.status ? ` (status filter applies within each page of the store's listing)` : ''}.`;
    results.replaceChildren(
      h('p', { class: 'note', id: 'page-summary' }, summary),
      page.sessions.length
        ? h('table', { class: 'sessions', 'aria-describedby': 'page-summary' }, head, body)
        : h('p', {}, 'No sessions on this page.'),
      h('nav', { class: 'toolbar', 'aria-label': 'Pages' }, prev, next),
    );
    announce(summary);
  }

  await load();
}
