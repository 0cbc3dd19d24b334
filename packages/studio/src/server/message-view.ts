import { idempotencyKeyFor, type MessageRecord, type SessionRecord } from '@agentstore/core';

/**
 * A stored message as the page gets it: the record as stored (with `parts` and `usage` when a
 * newer core wrote them; both optional), plus the idempotency key each call's handler was given
 * (`idempotencyKeyFor(sessionId, toolCallId, incarnationId)`, what went downstream), on the call
 * and on its result.
 */
export type MessageView = MessageRecord & {
  toolCalls?: (NonNullable<MessageRecord['toolCalls']>[number] & { idempotencyKey: string })[];
  idempotencyKey?: string;
};

export async function viewMessages(
  session: Pick<SessionRecord, 'id' | 'incarnationId'>,
  messages: MessageRecord[],
): Promise<MessageView[]> {
  // The key the loop gave the handler: by the session's incarnation when it has one.
  const keyOf = (toolCallId: string) =>
    idempotencyKeyFor(session.id, toolCallId, session.incarnationId ?? null);
  return Promise.all(
    messages.map(async (m): Promise<MessageView> => {
      const view: MessageView = { ...m } as MessageView;
      if (m.toolCalls?.length) {
        view.toolCalls = await Promise.all(
          m.toolCalls.map(async (c) => ({ ...c, idempotencyKey: await keyOf(c.id) })),
        );
      }
      if (m.role === 'tool' && m.toolCallId !== undefined) view.idempotencyKey = await keyOf(m.toolCallId);
      return view;
    }),
  );
}
