/**
 * DynamoDB store with TransactWriteItems appends.
 * @module @agentstore/dynamodb
 */
export { DEFAULT_MAX_CLOCK_SKEW_MS, type DynamoDbStoreOptions, dynamodbStore } from './dynamodb-store.ts';
export { DYNAMODB_LIMITS } from './limits.ts';
export { storeFromUrl } from './store-from-url.ts';
export { type CreateTableOptions, createTable, tableDefinition } from './table.ts';
export { type UpgradeTableResult, upgradeTable } from './upgrade-table.ts';
export { type TableCheck, tableProblems, type VerifyTableOptions, verifyTable } from './verify-table.ts';
