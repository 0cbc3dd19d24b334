/**
 * Real-server launchers for tests and benchmarks.
 * @module @agentstore/conformance/launchers
 */
export * from './d1.ts';
export * from './drop-proxy.ts';
export * from './dynamodb.ts';
export * from './pgbouncer.ts';
export * from './postgres.ts';
export * from './process-tools.ts';
export * from './redis.ts';
