import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Sim, rules, startSim } from '@delegate/api-sim';
import {
  countLinkedChildren,
  createFileStateCache,
  createRootToolUseContext,
} from '@delegate/context-isolation';
import {
  type FileStateCache,
  type Message,
  DelegateError,
  createUserMessage,
  getLastAssistantMessage,
  getText,
} from '@delegate/core';
import {
  type CacheSafeParams,
  buildForkedMessages,
  diagnoseCacheBreak,
  fingerprintRequest,
} from '@delegate/fork-cache';
import { getBuiltinTools } from '@delegate/tools';
import { type ForkedAgentCompletion, runForkedAgent } from './run-forked-agent.js';
import { createApiClient } from '../session/model-config.js';
import { createCanUseTool } from '../permissions.js';
import { query } from '../query/query.js';
import { getRenderedRequestParts } from '../query/rendered-request.js';
import { readTranscript } from '../transcripts/read-transcript.js';
import { TranscriptStore } from '../transcripts/transcript-store.js';

const SYSTEM = ['You are the parent agent. '.repeat(300)];
let sim: Sim | undefined;
let dir: string | undefined;

afterEach(async () => {
  await sim?.close();
  sim = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function parentTurn() {
  dir = await mkdtemp(join(tmpdir(), 'delegate-fork-'));
  const context = createRootToolUseContext({
    cwd: dir,
    tools: getBuiltinTools(),
    model: 'claude-sonnet-5-5',
  });
  const client = createApiClient({ apiKey: 'k', baseURL: sim!.url });
  const messages: Message[] = [createUserMessage({ content: 'Look around, then summarise.' })];
  for await (const event of query({
    client,
    messages,
    systemPrompt: SYSTEM,
    userContext: { projectInstructions: 'Be brief.' },
    toolUseContext: context,
    canUseTool: createCanUseTool(),
    querySource: 'repl_main_thread',
  })) {
    if (event.type === 'user' || event.type === 'assistant') messages.push(event);
  }
  const parts = getRenderedRequestParts(context)!;
  const params: CacheSafeParams = {
    systemPrompt: parts.systemPrompt,
    userContext: { ...parts.userContext },
    systemContext: {},
    toolUseContext: context,
    forkContextMessages: messages,
  };
  return { client, context, messages, params, parts };
}

describe('runForkedAgent', () => {
  it('forks from a finished turn, shares the parent prefix and reports usage and cache hit rate', async () => {
    sim = await startSim({
      policy: rules([
        {
          match: { lastUserText: 'Summarise the session' },
          reply: 'Summary: the parent looked around.',
        },
        {
          match: { toolResult: false },
          reply: [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }],
        },
        { match: { toolResult: 'Glob' }, reply: 'Nothing here.' },
      ]),
    });
    const { client, params, parts } = await parentTurn();
    const transcript = new TranscriptStore({ directory: dir!, sessionId: 'fork-test' });
    let completion: ForkedAgentCompletion | undefined;
    const result = await runForkedAgent({
      client,
      promptMessages: [createUserMessage({ content: 'Summarise the session in one line.' })],
      cacheSafeParams: params,
      canUseTool: createCanUseTool(),
      querySource: 'post_turn_summary',
      forkLabel: 'summary',
      transcript,
      toolDefinitions: parts.toolDefinitions,
      onComplete: (value) => (completion = value),
    });
    expect(getText(getLastAssistantMessage(result.messages)!.message.content)).toBe(
      'Summary: the parent looked around.',
    );
    const [, parentLast, fork] = sim.journal.entries;
    // The fork's request extends the parent's last request: it differs only in what comes after it.
    const diagnosis = diagnoseCacheBreak(
      fingerprintRequest(parentLast!.body as never),
      fingerprintRequest(fork!.body as never),
    );
    expect(diagnosis.identical).toBe(false);
    if (!diagnosis.identical) expect(diagnosis.firstDifference.part).toBe('message');
    expect(fork!.usage!.cache_read_input_tokens).toBeGreaterThan(0);
    expect(completion).toMatchObject({
      forkLabel: 'summary',
      querySource: 'post_turn_summary',
      messageCount: 1,
    });
    expect(completion!.cacheHitRate).toBeGreaterThan(0.9);
    expect(completion!.totalUsage.cache_read_input_tokens).toBe(
      fork!.usage!.cache_read_input_tokens,
    );
    await transcript.flush();
    const lines = await readTranscript(transcript.agentPath(result.agentId!));
    expect(lines.at(-1)?.type).toBe('assistant');
  });

  it("releases the child's file cache and abort link when it ends, even when it fails", async () => {
    sim = await startSim({
      policy: rules([
        {
          match: { lastUserText: 'loop' },
          reply: [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }],
        },
        {
          match: { toolResult: 'Glob', when: (request) => request.turnIndex > 2 },
          reply: [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }],
        },
        { match: {}, reply: 'fine' },
      ]),
    });
    const { client, params } = await parentTurn();
    const source = createFileStateCache();
    source.set(join(dir!, 'seen.txt'), { content: 'seen', timestamp: 1 });
    const clones: FileStateCache[] = [];
    const cloneOriginal = source.clone.bind(source);
    source.clone = () => {
      const copy = cloneOriginal();
      clones.push(copy);
      return copy;
    };
    const parent = params.toolUseContext.abortController;
    await runForkedAgent({
      client,
      promptMessages: [createUserMessage({ content: 'summarise' })],
      cacheSafeParams: params,
      canUseTool: createCanUseTool(),
      querySource: 'summary',
      forkLabel: 'summary',
      overrides: { readFileState: source },
    });
    expect(clones).toHaveLength(1);
    // The child had the entry while it ran; it was released afterwards, and the source kept it.
    expect(clones[0]!.size).toBe(0);
    expect(source.has(join(dir!, 'seen.txt'))).toBe(true);
    expect(countLinkedChildren(parent)).toBe(0);
    const failing = runForkedAgent({
      client,
      promptMessages: [createUserMessage({ content: 'loop' })],
      cacheSafeParams: params,
      canUseTool: createCanUseTool(),
      querySource: 'summary',
      forkLabel: 'summary',
      maxTurns: 1,
    });
    await expect(failing).rejects.toSatisfy((error: unknown) =>
      DelegateError.hasCode(error, 'MAX_TURNS'),
    );
    expect(countLinkedChildren(parent)).toBe(0);
  });

  it('writes no transcript with skipTranscript, and never caches its own prompt with skipCacheWrite', async () => {
    sim = await startSim({ policy: rules([], { fallback: 'suggested next step' }) });
    const { client, params } = await parentTurn();
    const transcript = new TranscriptStore({ directory: dir!, sessionId: 'skips' });
    const fork = (skips: { skipTranscript?: boolean; skipCacheWrite?: boolean }) =>
      runForkedAgent({
        client,
        promptMessages: [createUserMessage({ content: 'suggest a next step '.repeat(200) })],
        cacheSafeParams: params,
        canUseTool: createCanUseTool(),
        querySource: 'suggestion',
        forkLabel: 'suggestion',
        transcript,
        ...skips,
      });
    const usage = () => sim!.journal.entries.at(-1)!.usage!;
    // Twice the same fire-and-forget fork: the second reads the parent's prefix, but its
    // prompt was never written, so it is still uncached.
    const skipped = await fork({ skipTranscript: true, skipCacheWrite: true });
    const first = usage();
    await fork({ skipTranscript: true, skipCacheWrite: true });
    const second = usage();
    expect(second.cache_read_input_tokens).toBeGreaterThan(0);
    expect(second.input_tokens).toBe(first.input_tokens);
    expect(second.input_tokens).toBeGreaterThan(400);
    const body = sim.journal.entries.at(-1)!.body as { messages: unknown[] };
    expect(JSON.stringify(body.messages.at(-1))).not.toContain('cache_control');
    // The same fork writing its tail: once more, and its prompt comes from the cache.
    const written = await fork({});
    const again = await fork({});
    expect(usage().input_tokens).toBeLessThan(first.input_tokens / 10);
    expect(skipped.agentId).toBeUndefined();
    await transcript.flush();
    expect(await transcript.listAgents()).toEqual([written.agentId, again.agentId].sort());
  });

  it('refuses maxOutputTokens when the fork shares the cache, and allows it when it does not', async () => {
    sim = await startSim({ policy: rules([], { fallback: 'ok' }) });
    const { client, params } = await parentTurn();
    const run = (shareCache: boolean) =>
      runForkedAgent({
        client,
        promptMessages: [createUserMessage({ content: 'compact this' })],
        cacheSafeParams: params,
        canUseTool: createCanUseTool(),
        querySource: 'compact',
        forkLabel: 'compact',
        maxOutputTokens: 2048,
        shareCache,
      });
    await expect(run(true)).rejects.toSatisfy((error: unknown) =>
      DelegateError.hasCode(error, 'CACHE_UNSAFE'),
    );
    const allowed = await run(false);
    expect(allowed.messages.at(-1)?.type).toBe('assistant');
  });

  it('gives three directives requests that agree up to the directive block', async () => {
    sim = await startSim({
      policy: rules([
        {
          match: { forkDirective: true },
          reply: (request) => `Scope: ${request.forkDirective}\nResult: ok`,
        },
        {
          match: { toolResult: false },
          reply: [
            { type: 'tool_use', name: 'Glob', input: { pattern: '*' } },
            { type: 'tool_use', name: 'Grep', input: { pattern: 'x' } },
          ],
        },
        { match: { toolResult: true }, reply: 'done' },
      ]),
    });
    const { client, params, parts, messages } = await parentTurn();
    // Fork from the assistant message that made two tool calls.
    const toolCall = messages.find(
      (message) => message.type === 'assistant' && message.message.stop_reason === 'tool_use',
    );
    const history = messages.slice(0, messages.indexOf(toolCall!));
    for (const directive of ['check A', 'check B', 'check C']) {
      await runForkedAgent({
        client,
        promptMessages: buildForkedMessages(directive, toolCall as never),
        cacheSafeParams: { ...params, forkContextMessages: history },
        canUseTool: createCanUseTool(),
        querySource: 'agent:builtin:fork',
        forkLabel: 'fork',
        toolDefinitions: parts.toolDefinitions,
      });
    }
    const forks = sim.journal.filter((entry) => JSON.stringify(entry.body).includes('check '));
    expect(forks).toHaveLength(3);
    const prints = forks.map((entry) => fingerprintRequest(entry.body as never));
    for (const other of prints.slice(1)) {
      const diagnosis = diagnoseCacheBreak(prints[0]!, other);
      expect(diagnosis.identical).toBe(false);
      if (!diagnosis.identical) {
        expect(diagnosis.firstDifference).toMatchObject({
          part: 'message',
          messageIndex: prints[0]!.messages.length - 1,
        });
        expect(diagnosis.firstDifference.blockIndex).toBe(
          prints[0]!.messages.at(-1)!.blocks.length - 1,
        );
      }
    }
    // Later siblings read the prefix the first one wrote.
    expect(forks[2]!.usage!.cache_read_input_tokens).toBeGreaterThan(
      forks[0]!.usage!.cache_read_input_tokens,
    );
  });

  it('counts the usage of a retried response once', async () => {
    sim = await startSim({
      policy: rules([], { fallback: 'ok' }),
      // The fork's first stream fails once its usage arrived (message_delta, the 5th of 6
      // events), before its message_stop; the retry succeeds.
      faults: [
        {
          kind: 'stream_error',
          times: 1,
          afterEvents: 5,
          match: { lastUserText: 'one line, please' },
        },
      ],
    });
    const { client, params } = await parentTurn();
    const result = await runForkedAgent({
      client,
      promptMessages: [createUserMessage({ content: 'one line, please' })],
      cacheSafeParams: params,
      canUseTool: createCanUseTool(),
      querySource: 'summary',
      forkLabel: 'summary',
    });
    const answers = result.messages.filter((message) => message.type === 'assistant');
    expect(answers).toHaveLength(1);
    expect(result.messages.some((message) => message.type === 'system')).toBe(true);
    const usage = answers[0]!.type === 'assistant' ? answers[0]!.message.usage : undefined;
    expect(result.totalUsage.input_tokens).toBe(usage!.input_tokens);
    expect(result.totalUsage.output_tokens).toBe(usage!.output_tokens);
  });
});
