import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { storeWaits } from '../src/loop/store-waits.ts';

/** A store call the test answers by hand. */
function pendingCall<T>() {
  let answer!: (value: T) => void;
  const call = new Promise<T>((resolve) => {
    answer = resolve;
  });
  return { call, answer };
}

const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('storeWaits', () => {
  it('settles as the call does, with one listener per signal however many calls wait', async () => {
    const caller = new AbortController();
    const lease = new AbortController();
    const waits = storeWaits(caller.signal, lease.signal);
    const calls = Array.from({ length: 100 }, () => pendingCall<number>());
    const answers = calls.map(({ call }) => waits.answer(call));
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    expect(getEventListeners(lease.signal, 'abort')).toHaveLength(1);
    for (const [i, { answer }] of calls.entries()) answer(i);
    expect(await Promise.all(answers)).toEqual(calls.map((_, i) => i));
    await expect(waits.answer(Promise.reject(new Error('store failed')))).rejects.toThrow('store failed');
    waits.stop();
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(lease.signal, 'abort')).toHaveLength(0);
  });

  it('a lost lease ends every wait at once with its reason; later waits end at once too', async () => {
    const waits = storeWaits(new AbortController().signal, AbortSignal.abort(new Error('lease lost')));
    const { call } = pendingCall<number>();
    await expect(waits.answer(call)).rejects.toThrow('lease lost');
    const lease = new AbortController();
    const live = storeWaits(new AbortController().signal, lease.signal);
    const pending = live.answer(pendingCall<number>().call);
    lease.abort(new Error('lost meanwhile'));
    await expect(pending).rejects.toThrow('lost meanwhile');
    // A call that then fails is not an unhandled rejection.
    await expect(live.answer(Promise.reject(new Error('moot')))).rejects.toThrow('lost meanwhile');
    live.stop();
  });

  it('the caller giving up ends a wait one turn later, and an answer arriving within that turn is taken', async () => {
    const caller = new AbortController();
    const waits = storeWaits(caller.signal, new AbortController().signal);
    const answered = pendingCall<string>();
    const unanswered = pendingCall<string>();
    const taken = waits.answer(answered.call);
    const given = expect(waits.answer(unanswered.call)).rejects.toThrow('caller gave up');
    caller.abort(new Error('caller gave up'));
    answered.answer('committed');
    expect(await taken).toBe('committed');
    await given;
    // A wait that begins after the abort gets its own turn.
    const late = pendingCall<string>();
    const lateWait = waits.answer(late.call);
    late.answer('in time');
    expect(await lateWait).toBe('in time');
    const never = expect(waits.answer(pendingCall<string>().call)).rejects.toThrow('caller gave up');
    await turn();
    await never;
    waits.stop();
  });

  it("whileHeld: the caller's abort does not end it (finished results are still sent); a lost lease does", async () => {
    const caller = new AbortController();
    const lease = new AbortController();
    const waits = storeWaits(caller.signal, lease.signal);
    const sending = pendingCall<string>();
    const held = waits.whileHeld(sending.call);
    caller.abort(new Error('caller gave up'));
    await turn();
    await turn();
    sending.answer('landed');
    expect(await held).toBe('landed');
    const hanging = expect(waits.whileHeld(pendingCall<string>().call)).rejects.toThrow('lease lost');
    lease.abort(new Error('lease lost'));
    await hanging;
    waits.stop();
  });
});
