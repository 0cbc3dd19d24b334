/**
 * The session indexes a SQL store keeps for `listSessions` filters used together: one per
 * combination of two or three of owner, tenant and agent name, each ending in `id` so a page is
 * read in cursor order straight off the index. Single filters have their own (column, id) index.
 * The columns never change after a session is created, so appends never touch these indexes.
 */
export const COMBINED_FILTER_INDEXES: readonly (readonly [name: string, columns: readonly string[]])[] = [
  ['owner_tenant', ['owner_id', 'tenant_id']],
  ['owner_agent', ['owner_id', 'agent_name']],
  ['tenant_agent', ['tenant_id', 'agent_name']],
  ['owner_tenant_agent', ['owner_id', 'tenant_id', 'agent_name']],
];
