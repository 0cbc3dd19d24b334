import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewMessage, SessionInit } from '@agentstore/core';

/** A fresh directory for database files; `cleanup` removes it with everything inside. */
export function tempDatabaseDir(): { file: (name?: string) => string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'agentstore-sqlite-'));
  return {
    file: (name = 'store.db') => join(dir, name),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export const init = (overrides: Partial<SessionInit> = {}): SessionInit => ({
  agentName: 'agent',
  ownerId: 'owner-1',
  tenantId: 'tenant-1',
  state: { step: 0 },
  ...overrides,
});

export function messages(prefix: string, count: number): NewMessage[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}-${i}`,
    role: i % 2 === 0 ? 'assistant' : 'tool',
    content: `${prefix} content ${i}`,
    createdAt: new Date(1_700_000_000_000 + i).toISOString(),
  }));
}
