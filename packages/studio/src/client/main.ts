import { getJson, type Info } from './api.ts';
import { h } from './dom.ts';
import { renderList } from './list-view.ts';
import { renderSession } from './session-view.ts';

let info: Info;
let stop: () => void = () => {};

async function route(): Promise<void> {
  stop();
  stop = () => {};
  const main = document.getElementById('main')!;
  const match = /^#\/session\/([^?]+)(?:\?at=(\d+))?$/.exec(location.hash);
  if (match) {
    const at = match[2] === undefined ? null : Number(match[2]);
    stop = await renderSession(main, decodeURIComponent(match[1]!), at);
  } else await renderList(main, info);
  document.title = match
    ? `${decodeURIComponent(match[1]!)} — agentstore studio`
    : 'Sessions — agentstore studio';
}

async function start(): Promise<void> {
  info = await getJson<Info>('/api/info');
  const scope = [
    info.scope.tenantId && `tenant ${info.scope.tenantId}`,
    info.scope.ownerId && `owner ${info.scope.ownerId}`,
  ].filter(Boolean);
  document.getElementById('scope')!.textContent = scope.length
    ? `Scope: ${scope.join(', ')}`
    : 'Scope: the whole store';
  window.addEventListener('hashchange', () => void route());
  await route();
}

start().catch((error: unknown) => {
  document
    .getElementById('main')!
    .replaceChildren(h('p', { class: 'error', role: 'alert' }, String((error as Error).message)));
});
