import type { ScenarioSummary, TortureReport } from './runner.ts';

const errors = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([code, count]) => `${code}×${count}`)
    .join(' ') || '-';

const line = (label: string, s: ScenarioSummary) =>
  `  ${label.padEnd(10)} trials ${String(s.trials).padStart(5)}  kills ${String(s.kills).padStart(5)}  resumes ${String(s.resumes).padStart(5)}  completed ${String(s.completed).padStart(5)}  duplicates ${s.duplicates}  lost ${s.lost}  violations ${s.violations}  worker errors ${errors(s.workerErrors)}  append errors ${errors(s.appendErrors)}`;

/** The human-readable report the CLI prints. */
export function formatReport(report: TortureReport): string {
  const out: string[] = [`agentstore torture, seed ${report.seed}`];
  for (const store of report.stores) {
    out.push(
      '',
      `${store.store} — ${store.describe} (clean run ${store.calibratedRunMs} ms, ${Math.round(store.durationMs / 1000)} s)`,
    );
    out.push(line('crash', store.crash));
    for (const race of store.race) {
      out.push(
        `${line(`race x${race.racers}`, race)}  racers completed ${race.racersCompleted}, that appended ${race.racersThatAppended}`,
      );
    }
    if (store.appendRace.trials)
      out.push(
        `${line(`appends x${store.appendRace.racers}`, store.appendRace)}  acknowledged ${store.appendRace.acknowledged} lease-less appends`,
      );
    if (store.fence.trials)
      out.push(
        `${line('fence', store.fence)}  LeaseLostError runs ${store.fence.leaseLostRuns}, stale appends refused ${store.fence.staleAppendsRefused}`,
      );
    if (store.partition.trials)
      out.push(
        `${line('partition', store.partition)}  LeaseLostError runs ${store.partition.leaseLostRuns}, effects after the lease was lost ${store.partition.effectsFromPartitioned}`,
      );
    if (store.fault)
      out.push(
        `${line('fault', store.fault)}  restarts ${store.fault.restarts} (${store.fault.duringRun} while a worker ran)`,
      );
    for (const reason of store.skipped) out.push(`  skipped: ${reason}`);
  }
  const t = report.totals;
  out.push(
    '',
    `total: ${t.trials} trials, ${t.kills} kills, ${t.resumes} resumes, ${t.duplicates} duplicates, ${t.lost} lost, ${t.violations} violations`,
  );
  for (const v of report.violations.slice(0, 50)) {
    out.push(
      `VIOLATION ${v.store} ${v.scenario} trial ${v.trial} (seed ${v.seed}, session ${v.sessionId}): ${v.message}`,
    );
  }
  if (report.violations.length > 50) out.push(`… and ${report.violations.length - 50} more (see --json)`);
  return out.join('\n');
}
