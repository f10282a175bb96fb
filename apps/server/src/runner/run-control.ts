import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RunExecutor } from './run-executor.js';

/** An action on a run that only the process working on it can carry out. */
export type ControlRequest =
  | { op: 'cancel'; runId: string }
  | { op: 'cancelAgent'; runId: string; agentId: string }
  | { op: 'backgroundAgent'; runId: string; agentId: string }
  | { op: 'isActive'; runId: string };

/**
 * Reaches the process that works on a run: this one, or (with a shared queue) whichever
 * worker holds it. Each call resolves true when that process carried the action out.
 */
export interface RunControl {
  /** Carries out `request`; false when no process works on the run (or the action failed). */
  send(request: ControlRequest): Promise<boolean>;
  /** Stops listening. */
  close(): Promise<void>;
}

/** Carries a request out on this process's executor, if it works on the run. */
export function applyLocally(executor: RunExecutor | undefined, request: ControlRequest): boolean {
  if (!executor?.isActive(request.runId)) return false;
  switch (request.op) {
    case 'cancel':
      return executor.cancel(request.runId);
    case 'cancelAgent':
      return executor.cancelAgent(request.runId, request.agentId);
    case 'backgroundAgent':
      return executor.backgroundAgent(request.runId, request.agentId);
    case 'isActive':
      return true;
  }
}

/** The control of a single server: the run works here or nowhere. */
export class LocalRunControl implements RunControl {
  private readonly executor: RunExecutor | undefined;

  constructor(executor: RunExecutor | undefined) {
    this.executor = executor;
  }

  /** Carries the request out here. */
  async send(request: ControlRequest): Promise<boolean> {
    return applyLocally(this.executor, request);
  }

  /** Nothing to close. */
  async close(): Promise<void> {}
}

type Envelope = { id: string; replyTo: string; request: ControlRequest };
type Reply = { id: string; done: boolean };

/**
 * Control over Redis pub/sub: a request is published on the deployment's control channel;
 * the worker that holds the run carries it out and answers on the asker's reply channel.
 * Workers that do not hold the run stay silent, so no answer within `timeoutMs` means no
 * process works on it.
 */
export class RedisRunControl implements RunControl {
  private readonly executor: RunExecutor | undefined;
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly channel: string;
  private readonly replyChannel: string;
  private readonly timeoutMs: number;
  private readonly waiting = new Map<string, (done: boolean) => void>();

  private constructor(options: {
    executor: RunExecutor | undefined;
    publisher: Redis;
    subscriber: Redis;
    prefix: string;
    timeoutMs: number;
  }) {
    this.executor = options.executor;
    this.publisher = options.publisher;
    this.subscriber = options.subscriber;
    this.channel = `${options.prefix}:control`;
    this.replyChannel = `${options.prefix}:control-reply:${randomBytes(8).toString('hex')}`;
    this.timeoutMs = options.timeoutMs;
  }

  /** Subscribes (this process answers for its own runs when it has an executor). */
  static async open(options: {
    executor: RunExecutor | undefined;
    connect: () => Redis;
    prefix: string;
    timeoutMs?: number;
  }): Promise<RedisRunControl> {
    const control = new RedisRunControl({
      executor: options.executor,
      publisher: options.connect(),
      subscriber: options.connect(),
      prefix: options.prefix,
      timeoutMs: options.timeoutMs ?? 2_000,
    });
    control.subscriber.on('message', (channel: string, text: string) =>
      control.receive(channel, text),
    );
    await control.subscriber.subscribe(control.channel, control.replyChannel);
    return control;
  }

  /** Here first, else the worker that holds the run. */
  async send(request: ControlRequest): Promise<boolean> {
    if (applyLocally(this.executor, request)) return true;
    const id = randomBytes(8).toString('hex');
    const answered = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(false);
      }, this.timeoutMs);
      this.waiting.set(id, (done) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(done);
      });
    });
    const envelope: Envelope = { id, replyTo: this.replyChannel, request };
    await this.publisher.publish(this.channel, JSON.stringify(envelope));
    return answered;
  }

  /** Unsubscribes and closes both connections. */
  async close(): Promise<void> {
    for (const resolve of this.waiting.values()) resolve(false);
    await this.subscriber.quit().catch(() => undefined);
    await this.publisher.quit().catch(() => undefined);
  }

  private receive(channel: string, text: string): void {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (channel === this.replyChannel) {
      const reply = message as Reply;
      this.waiting.get(reply.id)?.(reply.done);
      return;
    }
    const envelope = message as Envelope;
    if (!envelope.request || envelope.replyTo === this.replyChannel) return;
    // Only the process working on the run answers.
    if (!this.executor?.isActive(envelope.request.runId)) return;
    const reply: Reply = { id: envelope.id, done: applyLocally(this.executor, envelope.request) };
    void this.publisher.publish(envelope.replyTo, JSON.stringify(reply)).catch(() => undefined);
  }
}
