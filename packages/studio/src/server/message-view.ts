import { idempotencyKeyFor, type MessageRecord } from '@agentstore/core';

/**
 * A stored message as the page gets it: the record as stored (with `parts` and `usage` when a
 * newer core wrote them; both optional), plus the idempotency key each call's handler was given
 * (`idempotencyKeyFor(sessionId, toolCallId)`, what went downstream), on the call and on its result.
 */
export type MessageView = MessageRecord & {
  toolCalls?: (NonNullable<MessageRecord['toolCalls']>[number] & { idempotencyKey: string })[];
  idempotencyKey?: string;
};

export async function viewMessages(sessionId: string, messages: MessageRecord[]): Promise<MessageView[]> {
  return Promise.all(
    messages.map(async (m): Promise<MessageView> => {
      const view: MessageView = { ...m } as MessageView;
      if (m.toolCalls?.length) {
        view.toolCalls = await Promise.all(
          m.toolCalls.map(async (c) => ({ ...c, idempotencyKey: await idempotencyKeyFor(sessionId, c.id) })),
        );
      }
      if (m.role === 'tool' && m.toolCallId !== undefined)
        view.idempotencyKey = await idempotencyKeyFor(sessionId, m.toolCallId);
      return view;
    }),
  );
}
