import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { type AppState, type SetAppState, DelegateError } from '@delegate/core';
import type { QueuedNotification } from '../transcripts/queued-notification.js';
import { secretRedactor } from '../util/redact-secrets.js';
import { TaskRegistry } from './task-registry.js';

function rootStore(): { state: () => AppState; set: SetAppState; calls: () => number } {
  let state = { tasks: {} } as unknown as AppState;
  let calls = 0;
  return {
    state: () => state,
    set: (update) => {
      calls++;
      state = update(state);
    },
    calls: () => calls,
  };
}

const nextTick = () => new Promise((resolve) => setImmediate(resolve));

describe('TaskRegistry', () => {
  it('returns at once from waitFor and waitForNotification when the signal has already aborted', async () => {
    const registry = new TaskRegistry();
    const task = registry.register({ type: 'local_agent', description: 'long job' });
    const controller = new AbortController();
    controller.abort();
    // Without the early return these would wait out their (test-timeout-sized) timeouts.
    const waited = await registry.waitFor(task.id, {
      timeoutMs: 600_000,
      signal: controller.signal,
    });
    expect(waited.status).toBe('running');
    expect(
      await registry.waitForNotification({ timeoutMs: 600_000, signal: controller.signal }),
    ).toBe(false);
  });

  it('refuses a signal that is not an AbortSignal before it starts a timer, and takes one that works like it', async () => {
    const registry = new TaskRegistry();
    const task = registry.register({ type: 'local_agent', description: 'long job' });
    for (const signal of [{}, 'abort', null, { aborted: false }]) {
      await expect(
        registry.waitFor(task.id, { timeoutMs: 30, signal: signal as never }),
      ).rejects.toThrow(/waitFor: options\.signal must be an AbortSignal/);
      await expect(
        registry.waitForNotification({ timeoutMs: 30, signal: signal as never }),
      ).rejects.toThrow(/waitForNotification: options\.signal must be an AbortSignal/);
    }
    // No timer was left to fire on the bad signal (it would throw outside any await).
    await new Promise((resolve) => setTimeout(resolve, 60));
    const target = new EventTarget();
    const lookalike = Object.assign(target, { aborted: false });
    const waited = await registry.waitFor(task.id, {
      timeoutMs: 10,
      signal: lookalike as unknown as AbortSignal,
    });
    expect(waited.status).toBe('running');
  });

  it('refuses options that are not an object, naming the method', async () => {
    const registry = new TaskRegistry();
    const task = registry.register({ type: 'local_agent', description: 'long job' });
    for (const options of [null, 5, 'fast', []]) {
      await expect(registry.waitFor(task.id, options as never)).rejects.toThrow(
        /^waitFor: options must be an object/,
      );
      await expect(registry.waitForNotification(options as never)).rejects.toThrow(
        /^waitForNotification: options must be an object/,
      );
    }
  });

  it('does not return at once for timeoutMs Infinity or past the longest Node timer (which Node fires after 1 ms), and refuses a negative or NaN timeout', async () => {
    for (const timeoutMs of [Number.POSITIVE_INFINITY, 2 ** 31, 2 ** 40]) {
      const registry = new TaskRegistry();
      const task = registry.register({ type: 'local_agent', description: 'long job' });
      let settled = false;
      const waiting = registry.waitFor(task.id, { timeoutMs }).then((waited) => {
        settled = true;
        return waited;
      });
      const notified = registry.waitForNotification({ timeoutMs }).then(() => (settled = true));
      // Node turns a delay it cannot hold into 1 ms: these used to return at once.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(settled).toBe(false);
      registry.finish(task.id, { status: 'completed', result: 'done' });
      expect((await waiting).status).toBe('completed');
      registry.notify({ taskId: task.id, status: 'completed', description: 'long job' });
      await notified;
    }
    const registry = new TaskRegistry();
    const task = registry.register({ type: 'local_agent', description: 'job' });
    for (const timeoutMs of [-1, Number.NaN]) {
      await expect(registry.waitFor(task.id, { timeoutMs })).rejects.toThrow(
        /waitFor: timeoutMs must be a number of milliseconds, 0 or more/,
      );
      await expect(registry.waitForNotification({ timeoutMs })).rejects.toThrow(
        /waitForNotification: timeoutMs must be a number of milliseconds, 0 or more/,
      );
      // The options are checked before the task is looked up.
      await expect(registry.waitFor('no-such-task', { timeoutMs })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    }
  });

  it('refuses an option it does not take, naming the one meant, instead of waiting the default time', async () => {
    const registry = new TaskRegistry();
    const task = registry.register({ type: 'local_agent', description: 'job' });
    await expect(registry.waitFor(task.id, { timeout: 5000 } as never)).rejects.toThrow(
      'waitFor: options.timeout is not an option (did you mean timeoutMs?).',
    );
    await expect(registry.waitForNotification({ timeout: 5000 } as never)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('did you mean timeoutMs?'),
    });
  });

  it('keeps the first final status and returns a finished task from waitFor', async () => {
    const registry = new TaskRegistry();
    const task = registry.register({ type: 'local_agent', description: 'job' });
    const waiting = registry.waitFor(task.id, { timeoutMs: 600_000 });
    expect(registry.finish(task.id, { status: 'killed', error: 'stopped' })).toBe(true);
    expect(registry.finish(task.id, { status: 'completed', result: 'late result' })).toBe(false);
    expect((await waiting).status).toBe('killed');
    const again = await registry.waitFor(task.id, { timeoutMs: 600_000 });
    expect(again).toMatchObject({ status: 'killed', error: 'stopped' });
    expect(again.result).toBeUndefined();
  });

  it('mirrors a tick of changes into the root state in one update, touching only changed entries', async () => {
    const store = rootStore();
    const registry = new TaskRegistry({ setAppStateForTasks: store.set });
    const quiet = registry.register({ type: 'local_agent', description: 'quiet' });
    const busy = registry.register({ type: 'local_agent', description: 'busy' });
    await nextTick();
    expect(store.calls()).toBe(1);
    const quietMirror = store.state().tasks[quiet.id];
    for (let count = 1; count <= 500; count++) registry.update(busy.id, { toolUseCount: count });
    expect(store.calls()).toBe(1);
    await nextTick();
    expect(store.calls()).toBe(2);
    expect(store.state().tasks[busy.id]?.toolUseCount).toBe(500);
    // The unchanged entry is the same object as before: it was not copied again.
    expect(store.state().tasks[quiet.id]).toBe(quietMirror);
    registry.finish(busy.id, { status: 'completed', result: 'done' });
    registry.flushMirror();
    expect(store.state().tasks[busy.id]).toMatchObject({ status: 'completed', result: 'done' });
  });

  it('counts running background tasks as they start, move and end', () => {
    const registry = new TaskRegistry();
    const background = registry.register({
      type: 'local_agent',
      description: 'a',
      isBackgrounded: true,
    });
    const foreground = registry.register({ type: 'local_agent', description: 'b' });
    expect(registry.runningBackgroundCount).toBe(1);
    registry.update(foreground.id, { isBackgrounded: true });
    expect(registry.runningBackgroundCount).toBe(2);
    registry.update(foreground.id, { toolUseCount: 3 });
    expect(registry.runningBackgroundCount).toBe(2);
    registry.finish(background.id, { status: 'failed', error: 'x' });
    registry.finish(background.id, { status: 'completed' });
    expect(registry.runningBackgroundCount).toBe(1);
    expect(registry.runningBackground().map((task) => task.id)).toEqual([foreground.id]);
  });

  it('names at most 20 known ids when a task is not found', () => {
    const registry = new TaskRegistry();
    for (let index = 0; index < 30; index++)
      registry.register({ type: 'local_bash', description: `${index}` });
    let message = '';
    try {
      registry.require('t-missing');
    } catch (error) {
      expect(DelegateError.hasCode(error, 'NOT_FOUND')).toBe(true);
      message = (error as Error).message;
    }
    expect(message).toContain('and 10 older');
    expect(message.match(/\bt[0-9a-f]{12}\b/g)).toHaveLength(20);
  });

  it('leaves no abort listener behind after waiting for notifications', async () => {
    const controller = new AbortController();
    const registry = new TaskRegistry();
    for (let index = 0; index < 20; index++) {
      await registry.waitForNotification({ timeoutMs: 1, signal: controller.signal });
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('records each notification queued for the main agent once, and queues a restored one once, without recording it again', () => {
    const first = new TaskRegistry();
    const recorded: QueuedNotification[] = [];
    first.recordQueuedTo((record) => recorded.push(record));
    const task = first.register({ type: 'local_agent', description: 'job', isBackgrounded: true });
    first.finish(task.id, { status: 'completed', result: 'done' });
    const notification = { taskId: task.id, status: 'completed' as const, description: 'job' };
    const message = first.notify(notification);
    first.notify(notification);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ taskId: task.id, key: task.id, message });
    expect(recorded[0]?.task).toMatchObject({ id: task.id, status: 'completed', result: 'done' });

    const second = new TaskRegistry();
    const again: QueuedNotification[] = [];
    second.recordQueuedTo((record) => again.push(record));
    expect(second.restoreQueued([recorded[0]!, recorded[0]!])).toBe(1);
    expect(second.restoreQueued(recorded)).toBe(0);
    expect(again).toEqual([]);
    expect(second.get(task.id)).toMatchObject({ status: 'completed', result: 'done' });
    expect(second.get(task.id)?.notification?.status).toBe('queued');
    expect(second.runningBackgroundCount).toBe(0);
    expect(second.drainNotifications()).toEqual([message]);
    expect(second.get(task.id)?.notification?.status).toBe('delivered');
  });

  it('hands a restored sub-agent notification to its inbox once, never to the main queue or the main recorder, and skips one the main agent was told of', () => {
    const first = new TaskRegistry();
    const task = first.register({ type: 'local_agent', description: 'job', isBackgrounded: true });
    first.finish(task.id, { status: 'completed', result: 'done' });
    let inboxRecord: QueuedNotification | undefined;
    const message = first.notify(
      { taskId: task.id, status: 'completed', description: 'job' },
      {
        deliver: (queued) => {
          inboxRecord = first.queuedRecordOf(queued);
          return true;
        },
      },
    );
    expect(inboxRecord).toMatchObject({ taskId: task.id, key: task.id, message });
    expect(inboxRecord?.task).toMatchObject({ id: task.id, status: 'completed' });
    expect(first.queuedRecordOf({ ...message, uuid: 'not-a-notification' })).toBeUndefined();

    const second = new TaskRegistry();
    const recorded: QueuedNotification[] = [];
    second.recordQueuedTo((record) => recorded.push(record));
    const inbox: string[] = [];
    const deliver = (record: QueuedNotification) => inbox.push(record.message.uuid);
    expect(second.restoreQueued([inboxRecord!, inboxRecord!], { deliver })).toBe(1);
    expect(second.restoreQueued([inboxRecord!], { deliver })).toBe(0);
    expect(inbox).toEqual([message.uuid]);
    expect(second.pendingNotifications).toBe(0);
    expect(second.get(task.id)?.notification?.status).toBe('queued');
    // Its agent failed: handed to the main agent, it is recorded in the main transcript then.
    second.enqueue(message);
    expect(recorded.map((record) => record.message.uuid)).toEqual([message.uuid]);

    const third = new TaskRegistry();
    third.rememberNotified(new Map([[task.id, 'completed']]));
    expect(third.notifiedEarlierStatus(task.id)).toBe('completed');
    expect(third.restoreQueued([inboxRecord!], { deliver })).toBe(0);
    expect(inbox).toHaveLength(1);
  });

  it('stores the free text of task states redacted, and the notification message for the parent too', async () => {
    const secret = 'sk-ant-task-secret-0042';
    const store = rootStore();
    const registry = new TaskRegistry({
      setAppStateForTasks: store.set,
      redact: secretRedactor([secret])!,
    });
    const task = registry.register({
      type: 'local_agent',
      description: `deploy with ${secret}`,
      isBackgrounded: true,
    });
    registry.update(task.id, { lastActivity: `Bash: echo ${secret}`, toolUseCount: 1 });
    expect(registry.get(task.id)?.lastActivity).toBe('Bash: echo [REDACTED]');
    registry.finish(task.id, { status: 'completed', result: `Deployed using ${secret}` });
    const message = registry.notify({
      taskId: task.id,
      status: 'completed',
      description: `deploy with ${secret}`,
      result: `Deployed using ${secret}`,
    });
    const failed = registry.register({ type: 'local_agent', description: 'other' });
    registry.finish(failed.id, { status: 'failed', error: `rejected x-api-key ${secret}` });
    await nextTick();
    const states = JSON.stringify([registry.list(), store.state().tasks]);
    expect(states).not.toContain(secret);
    expect(registry.get(task.id)).toMatchObject({
      description: 'deploy with [REDACTED]',
      result: 'Deployed using [REDACTED]',
      notification: {
        status: 'queued',
        text: expect.stringContaining('Deployed using [REDACTED]'),
      },
    });
    expect(registry.get(failed.id)?.error).toBe('rejected x-api-key [REDACTED]');
    // The message the parent's next request carries is redacted, as a tool result is.
    expect(JSON.stringify(message)).toContain('Deployed using [REDACTED]');
    expect(JSON.stringify(message)).not.toContain(secret);
  });
});
