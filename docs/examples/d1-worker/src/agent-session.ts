import { DurableObject } from 'cloudflare:workers';
import { isAgentStoreError, type RunResult, run } from '@agentstore/core';
import { d1Store } from '@agentstore/d1';
import { REFUNDS_TABLE_SQL, supportAgent } from './agent.ts';
import type { Env } from './env.ts';
import { chatCompletionsLlm } from './llm.ts';

export interface SendInput {
  sessionId: string;
  userId: string;
  message: string;
}

export type SendResult =
  | { status: RunResult['status']; response: string }
  /** The run failed part-way (e.g. the model was down); the alarm finishes it from what D1 holds. */
  | { status: 'pending'; error: string }
  /** A run this object lost track of (its isolate died) still holds the lease: send again later. */
  | { status: 'busy'; retryAfterMs: number };

/** What the alarm needs to resume a run this object started. */
interface PendingRun {
  sessionId: string;
  userId: string;
}

let schemaReady: Promise<unknown> | undefined;

/**
 * One Durable Object per session: messages to a session are run one at a time, and an
 * alarm is the safety net for a run that did not finish (isolate evicted, deploy, model outage).
 * The conversation itself lives in D1, so any Worker can list and read sessions, and the lease
 * in D1 still fences a stale run if two objects ever ran the same session.
 */
export class AgentSession extends DurableObject<Env> {
  /** Runs of this session, one after another (a Durable Object interleaves requests at every await). */
  private queue: Promise<unknown> = Promise.resolve();

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.queue.then(work);
    this.queue = turn.catch(() => {});
    return turn;
  }

  private store() {
    return d1Store({ binding: this.env.DB });
  }

  private leaseTtlMs() {
    return Number(this.env.LEASE_TTL_MS ?? 30_000);
  }

  private runAgent(sessionId: string, userId: string, message?: string) {
    schemaReady ??= this.store()
      .migrate()
      .then(() => this.env.DB.prepare(REFUNDS_TABLE_SQL).run());
    return schemaReady.then(() =>
      run(supportAgent(this.env.DB), {
        store: this.store(),
        sessionId,
        ownerId: userId,
        ...(message !== undefined ? { message } : {}),
        llm: chatCompletionsLlm({
          baseUrl: this.env.LLM_BASE_URL,
          apiKey: this.env.LLM_API_KEY,
          model: this.env.LLM_MODEL,
        }),
        leaseTtlMs: this.leaseTtlMs(),
      }),
    );
  }

  send(input: SendInput): Promise<SendResult> {
    return this.serially(async () => {
      // Arm the alarm before anything is written: if this run dies, a fresh isolate resumes it.
      await this.ctx.storage.put<PendingRun>('pending', { sessionId: input.sessionId, userId: input.userId });
      await this.ctx.storage.setAlarm(Date.now() + 2 * this.leaseTtlMs());
      try {
        const result = await this.runAgent(input.sessionId, input.userId, input.message);
        await this.ctx.storage.deleteAlarm();
        await this.ctx.storage.delete('pending');
        return { status: result.status, response: result.response };
      } catch (error) {
        // Nothing of this message was written; the alarm finishes the older run.
        if (isAgentStoreError(error, 'SESSION_BUSY'))
          return { status: 'busy', retryAfterMs: error.retryAfterMs };
        // Every committed step is in D1; the alarm picks up from there.
        return { status: 'pending', error: error instanceof Error ? error.message : String(error) };
      }
    });
  }

  /** Resumes the unfinished run: a completed one returns its stored answer without a model call. */
  override alarm(): Promise<void> {
    return this.serially(async () => {
      const pending = await this.ctx.storage.get<PendingRun>('pending');
      if (!pending) return;
      try {
        await this.runAgent(pending.sessionId, pending.userId);
        await this.ctx.storage.delete('pending');
      } catch (error) {
        if (isAgentStoreError(error, 'SESSION_BUSY')) {
          // A run from a dead isolate still holds the lease: look again when it expires.
          await this.ctx.storage.setAlarm(Date.now() + error.retryAfterMs);
          return;
        }
        throw error; // the runtime retries a failed alarm with backoff
      }
    });
  }
}
