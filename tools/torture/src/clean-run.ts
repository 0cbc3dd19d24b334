import { runTorture, type TortureOptions, type TortureReport } from './runner.ts';

/**
 * Runs the torture and throws unless every crash trial was killed at least once in all, every run
 * completed, and nothing was duplicated, lost or violated: the short CI form of `agentstore-torture`
 * for one target, whose report the caller can inspect further.
 */
export async function runCleanTorture(options: TortureOptions): Promise<TortureReport> {
  const report = await runTorture(options);
  const problems = report.violations.map(
    (v) => `${v.store} ${v.scenario} #${v.trial} (seed ${v.seed}): ${v.message}`,
  );
  for (const store of report.stores) {
    const expected = options.onlyTrial ? 1 : options.trials;
    if (store.crash.trials !== expected)
      problems.push(`${store.store}: ${store.crash.trials} of ${expected} crash trials ran`);
    if (store.crash.completed !== store.crash.trials)
      problems.push(
        `${store.store}: ${store.crash.completed} of ${store.crash.trials} crashed runs completed`,
      );
    if (store.crash.kills === 0)
      problems.push(`${store.store}: no trial was killed; the torture proved nothing`);
  }
  const { duplicates, lost } = report.totals;
  if (duplicates || lost) problems.push(`${duplicates} duplicates, ${lost} lost messages`);
  if (problems.length > 0) throw new Error(`torture failed:\n${problems.join('\n')}`);
  return report;
}
