import { formatMicros, formatNumber, formatRatio } from './format.ts';
import { isMeasured, type MeasuredStore, type StoreResult } from './report.ts';

/**
 * Below this share of the floor's tool steps per second, a store is flagged: the built-in stores
 * run at about 0.6–1× of their floors; a store far under that usually holds a lock too long,
 * makes extra round trips per step, or serialises writers the floor does not.
 */
export const LOW_THROUGHPUT_RATIO = 0.5;

/** How far the store is from its floor in tool steps per second, at its worst concurrency level. */
export function worstThroughput(store: MeasuredStore): { concurrency: number; ratio: number } | null {
  let worst: { concurrency: number; ratio: number } | null = null;
  for (const t of store.throughput) {
    const ratio = t.storeVsFloor?.median;
    if (ratio === undefined || !Number.isFinite(ratio)) continue;
    if (worst === null || ratio < worst.ratio) worst = { concurrency: t.concurrency, ratio };
  }
  return worst;
}

/** "durability adds 12% per tool step over the floor": the pooled headline ratio in plain words. */
function overheadSentence(store: MeasuredStore): string {
  const overhead = store.step.overheadPerStep.p50Us;
  const floor = store.step.floor;
  if (floor === null) {
    return `durability adds ${formatMicros(overhead)} per tool step on this machine (the target has no floor to compare it with)`;
  }
  const ratio = floor.overheadVsPacedAppendPooled;
  if (!Number.isFinite(ratio)) {
    return `durability adds ${formatMicros(overhead)} per tool step on this machine (the floor append measured too close to zero for a ratio)`;
  }
  const percent = Math.round((ratio - 1) * 100);
  const share =
    percent >= 0
      ? `adds ${percent}% per tool step over the floor`
      : `costs ${-percent}% less per tool step than the floor`;
  return (
    `durability ${share} on this machine: ${formatMicros(overhead)} per step against ` +
    `${formatMicros(floor.pacedAppend.p50Us)} for one hand-written floor append (${formatRatio(ratio)})`
  );
}

function throughputSentence(store: MeasuredStore): string {
  const worst = worstThroughput(store);
  if (worst === null) return '';
  if (worst.ratio >= LOW_THROUGHPUT_RATIO) {
    return `; throughput at least ${formatRatio(worst.ratio)} the floor's (worst at ${worst.concurrency} concurrent sessions)`;
  }
  const rt = store.roundTrips;
  const unit = rt.method === 'driver' ? 'round trips' : 'store calls';
  const cause =
    rt.floorPerAppend !== null && rt.perAppend > rt.floorPerAppend
      ? `it makes ${formatNumber(rt.perAppend)} ${unit} per append where the floor makes ${formatNumber(rt.floorPerAppend)}, and ` +
        'a store this far under its floor usually pays for them, or holds a lock or transaction open too long'
      : `${rt.floorPerAppend === null ? '' : `with as many ${unit} per append as the floor (${formatNumber(rt.perAppend)}), `}` +
        'the time goes to work per step: CPU in this process (encoding, validation), a heavier statement or ' +
        'script on the server, or a lock that serialises writers the floor runs in parallel';
  return (
    `. **Warning: throughput is far below the floor**: ${formatRatio(worst.ratio)} of the floor's tool steps per ` +
    `second at ${worst.concurrency} concurrent sessions; ${cause}`
  );
}

/** One plain sentence per store, measured or not: what a reader needs before the tables. */
export function verdictLine(store: StoreResult): string {
  if (!isMeasured(store)) return `- **${store.store}**: not measured (${store.status}): ${store.reason}`;
  return `- **${store.store}**: ${overheadSentence(store)}${throughputSentence(store)}.`;
}

export const verdictLines = (stores: StoreResult[]): string[] => stores.map(verdictLine);
