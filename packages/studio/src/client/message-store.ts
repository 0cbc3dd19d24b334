import { getJson, type MessagesAnswer, type MessageView, sessionPath } from './api.ts';

export const PAGE = 200;

/**
 * The messages of one session the page has fetched, by seq, in pages of 200 from the store
 * (`afterSeq`), fetched only when the timeline scrolls near them. A 10,000-message session is
 * never fetched, or rendered, whole.
 */
export function createMessageStore(sessionId: string, at: number | null, onLoaded: () => void) {
  const bySeq = new Map<number, MessageView>();
  const resultSeqByCall = new Map<string, number>();
  const pending = new Set<number>();
  const done = new Set<number>();

  function add(messages: MessageView[]) {
    for (const m of messages) {
      bySeq.set(m.seq, m);
      if (m.role === 'tool' && m.toolCallId !== undefined) resultSeqByCall.set(m.toolCallId, m.seq);
    }
  }

  async function fetchPage(page: number, headSeq: number) {
    if (pending.has(page) || done.has(page)) return;
    pending.add(page);
    try {
      const answer = await getJson<MessagesAnswer>(`${sessionPath(sessionId)}/messages`, {
        afterSeq: page * PAGE,
        limit: PAGE,
        at: at ?? undefined,
      });
      add(answer.messages);
      // A page at the head is complete only up to the head: live updates fill the rest.
      if ((page + 1) * PAGE <= Math.min(headSeq, answer.headSeq)) done.add(page);
      onLoaded();
    } finally {
      pending.delete(page);
    }
  }

  return {
    get: (seq: number) => bySeq.get(seq),
    resultSeq: (toolCallId: string) => resultSeqByCall.get(toolCallId),
    add,
    /** Makes sure the messages `fromSeq..toSeq` are (being) fetched. */
    ensure(fromSeq: number, toSeq: number, headSeq: number) {
      for (let p = Math.floor((fromSeq - 1) / PAGE); p <= Math.floor((toSeq - 1) / PAGE); p++) {
        if (p < 0) continue;
        let missing = false;
        for (let s = Math.max(fromSeq, p * PAGE + 1); s <= Math.min(toSeq, (p + 1) * PAGE); s++) {
          if (!bySeq.has(s)) {
            missing = true;
            break;
          }
        }
        if (missing) void fetchPage(p, headSeq);
      }
    },
    size: () => bySeq.size,
  };
}

export type MessageStore = ReturnType<typeof createMessageStore>;
