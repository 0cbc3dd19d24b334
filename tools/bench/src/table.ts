import { type ResultsMarkdownOptions, resultsMarkdown } from './markdown.ts';
import type { BenchReport } from './report.ts';

/** The report as the terminal shows it: the same markdown tables the docs publish. */
export const formatTable = (report: BenchReport, options: ResultsMarkdownOptions = {}): string =>
  resultsMarkdown(report, options);
