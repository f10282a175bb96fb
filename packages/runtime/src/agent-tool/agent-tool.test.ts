import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { estimateBlockTokens, rules } from '@delegate/api-sim';
import type { AgentEvent } from '@delegate/core';
import { fingerprintRequest, diagnoseCacheBreak } from '@delegate/fork-cache';
import { readTranscript } from '../transcripts/read-transcript.js';
import {
  agentOf,
  isMain,
  lastUserBlocks,
  requestBody,
  resultText,
  agentCall,
} from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('Agent tool', () => {
  it('runs Explore in the foreground with read-only tools and returns its report', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'find config',
              prompt: 'Where is the config loaded?',
              subagent_type: 'Explore',
            }),
          ],
        },
        {
          match: { agent: 'Explore', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Grep', input: { pattern: 'config' } }],
        },
        {
          match: { agent: 'Explore', toolResult: 'Grep' },
          reply: 'The config is loaded in src/config.ts.',
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => `Explore said: ${resultText(request)}`,
        },
      ]),
    });
    await writeFile(join(current.cwd, 'config.ts'), 'export const config = {};\n');
    const { text } = await current.session.send('Find the config loader');
    expect(text).toBe('Explore said: The config is loaded in src/config.ts.');
    const exploreRequests = current.sim.journal.filter((entry) => agentOf(entry) === 'Explore');
    expect(exploreRequests.length).toBe(2);
    const toolNames = requestBody(exploreRequests[0]!)
      .tools!.map((tool) => tool.name)
      .sort();
    expect(toolNames).toEqual(['Bash', 'Glob', 'Grep', 'Read']);
    // Explore is a one-shot built-in: its report comes back without an id or usage trailer.
    const mainAfter = current.sim.journal.filter((entry) => agentOf(entry) === undefined).at(-1)!;
    expect(JSON.stringify(lastUserBlocks(mainAfter))).not.toContain('agentId:');
  });

  it('forks three workers whose requests share the prefix and read it from the cache', async () => {
    const directives = ['Audit the parser', 'Audit the loader', 'Audit the printer'];
    current = await createTestSession({
      policy: rules([
        {
          match: { forkDirective: true },
          reply: (request) => `Scope: ${request.forkDirective}\nResult: nothing wrong.`,
        },
        {
          match: { when: isMain, toolResult: false },
          reply: [
            { type: 'text', text: 'Forking three audits.' },
            ...directives.map((prompt) => agentCall({ description: prompt, prompt })),
          ],
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: 'All three audits are back.' },
      ]),
      session: { forkEnabled: true, forkLayout: 'shared-message' },
    });
    const { text } = await current.session.send('Audit the three modules');
    expect(text).toBe('All three audits are back.');
    const forks = current.sim.journal.filter(
      (entry) =>
        entry.status === 200 && JSON.stringify(lastUserBlocks(entry)).includes('fork-worker-rules'),
    );
    expect(forks).toHaveLength(3);
    // Identical up to the directive block: same tools, system, model, thinking and history.
    const fingerprints = forks.map((entry) => fingerprintRequest(entry.body as never));
    for (const other of fingerprints.slice(1)) {
      const diagnosis = diagnoseCacheBreak(fingerprints[0]!, other);
      expect(diagnosis.identical).toBe(false);
      if (!diagnosis.identical) {
        const lastMessage = requestBody(forks[0]!).messages.length - 1;
        expect(diagnosis.firstDifference).toMatchObject({
          part: 'message',
          messageIndex: lastMessage,
          blockIndex: lastUserBlocks(forks[0]!).length - 1,
        });
      }
    }
    // The second and third children read (nearly) all of the shared prefix from the cache.
    for (const entry of forks.slice(1)) {
      const usage = entry.usage!;
      const total =
        usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
      const directive = lastUserBlocks(entry).at(-1)!;
      const shared = total - estimateBlockTokens(directive as never);
      expect(usage.cache_read_input_tokens / shared).toBeGreaterThanOrEqual(0.99);
    }
  });

  it('notifies the parent when a background agent finishes, and TaskOutput returns its result', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false, lastUserText: 'Count the files' },
          reply: [
            agentCall({
              description: 'count files',
              prompt: 'Count the files',
              subagent_type: 'general-purpose',
              run_in_background: true,
            }),
          ],
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'sleep 0.3; ls | wc -l' } }],
        },
        {
          match: { agent: 'general-purpose', toolResult: 'Bash' },
          reply: (request) => `There are ${resultText(request).trim().split('\n')[0]} files.`,
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => {
            const taskId = /taskId: (\S+)/.exec(resultText(request))?.[1] ?? 'missing';
            return [
              { type: 'tool_use', name: 'TaskOutput', input: { task_id: taskId, timeout: 20_000 } },
            ];
          },
        },
        {
          match: { when: isMain, toolResult: 'TaskOutput' },
          reply: (request) => `TaskOutput: ${resultText(request)}`,
        },
        {
          match: { when: isMain, lastUserText: '<task-notification>' },
          reply: 'Noted the notification.',
        },
      ]),
      session: { permissionMode: 'bypassPermissions' },
    });
    await writeFile(join(current.cwd, 'a.txt'), 'a');
    const { text } = await current.session.send('Count the files');
    expect(text).toContain('status: completed');
    expect(text).toContain('There are 1 files.');
    // The notification was queued when the agent ended and rides along in the parent's next request.
    const mainRequests = current.sim.journal.filter((entry) => agentOf(entry) === undefined);
    const last = mainRequests.at(-1)!;
    const lastText = JSON.stringify(requestBody(last).messages.at(-1));
    expect(lastText).toContain('<task-notification>');
    expect(lastText).toContain('status: completed');
    expect(lastText).toContain('There are 1 files.');
    const [task] = current.session.tasks.list();
    expect(task).toMatchObject({
      status: 'completed',
      type: 'local_agent',
      result: 'There are 1 files.',
    });
  });

  it('retries a 529 in a child, and reports a child that fails for good with its transcript intact', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: '<task-notification>' },
          reply: (request) => `notified: ${request.lastUserText}`,
        },
        {
          match: { when: isMain, lastUserText: 'flaky', toolResult: false },
          reply: [
            agentCall({
              description: 'flaky',
              prompt: 'flaky job',
              subagent_type: 'general-purpose',
            }),
          ],
        },
        {
          match: { when: isMain, lastUserText: 'doomed', toolResult: false },
          reply: [
            agentCall({
              description: 'doomed',
              prompt: 'doomed job',
              subagent_type: 'general-purpose',
              run_in_background: true,
            }),
          ],
        },
        { match: { agent: 'general-purpose', lastUserText: 'flaky job' }, reply: 'flaky job done' },
        {
          match: { agent: 'general-purpose', lastUserText: 'doomed job' },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo step one' } }],
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => resultText(request),
        },
      ]),
      sim: {
        faults: [
          {
            kind: 'overloaded',
            times: 1,
            match: { agent: 'general-purpose', lastUserText: 'flaky job' },
          },
          { kind: 'api_error', match: { agent: 'general-purpose', toolResult: 'Bash' } },
        ],
      },
      session: { permissionMode: 'bypassPermissions' },
    });
    const { session, sim } = current;
    const flaky = await session.send('flaky');
    expect(flaky.text).toContain('flaky job done');
    const flakyRequests = sim.journal.filter((entry) => agentOf(entry) === 'general-purpose');
    expect(flakyRequests.map((entry) => entry.status)).toEqual([529, 200]);
    expect(flakyRequests[1]!.headers['x-stainless-retry-count']).toBe('1');

    const events: AgentEvent[] = [];
    session.events.on((event) => events.push(event));
    const doomed = await session.send('doomed', { waitForBackground: true });
    expect(doomed.text).toContain('notified:');
    expect(doomed.text).toContain('status: failed');
    expect(doomed.text).toContain('500');
    const failed = events.find((event) => event.type === 'agent.failed');
    expect(failed).toMatchObject({ code: 'API_ERROR' });
    const lines = await readTranscript(session.transcript!.agentPath(failed!.agentId));
    // Every line written before the failure, then the line that says why the run ended there.
    expect(lines.map((line) => line.type)).toEqual(['user', 'assistant', 'user', 'system']);
    expect(JSON.stringify(lines[1])).toContain('echo step one');
    expect(JSON.stringify(lines[2])).toContain('step one');
    expect(lines[3]).toMatchObject({ subtype: 'run_ended' });
    expect(JSON.stringify(lines[3])).toMatch(/The run failed: .*500/);
  });
});
