/**
 * Real-server launchers for tests and benchmarks: throwaway Postgres (initdb), PgBouncer, Redis
 * and Redis Cluster, DynamoDB Local, D1 (miniflare), and a TCP proxy that loses an answer.
 * @module @agentstore/servers
 */
export * from './d1.ts';
export * from './drop-proxy.ts';
export * from './dynamodb.ts';
export * from './pgbouncer.ts';
export * from './postgres.ts';
export * from './process-tools.ts';
export * from './redis.ts';
export * from './redis-cluster.ts';
