export * from './d1.ts';
export * from './process-tools.ts';
