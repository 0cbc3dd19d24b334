export * from './process-tools.ts';
