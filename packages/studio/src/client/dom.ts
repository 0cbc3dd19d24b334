// Tiny DOM helpers: every text goes in through textContent, never innerHTML (stored content is untrusted).
export type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children)
    if (child !== null && child !== undefined && child !== false) el.append(child);
  return el;
}

export const badge = (text: string, cls = '') => h('span', { class: `badge ${cls}`.trim() }, text);

export function announce(text: string): void {
  const region = document.getElementById('announce');
  if (region) region.textContent = text;
}

export function time(iso: string | null | undefined): string {
  if (!iso) return '-';
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace('T', ' ').replace('Z', ' UTC') : iso;
}

export function clip(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export const STATUS_LABELS: Record<string, string> = {
  running: 'running',
  'awaiting-approval': 'awaiting approval',
  complete: 'complete',
  interrupted: 'interrupted',
  failed: 'failed',
  empty: 'empty',
};

export const statusBadge = (status: string) => badge(STATUS_LABELS[status] ?? status, `s-${status}`);
