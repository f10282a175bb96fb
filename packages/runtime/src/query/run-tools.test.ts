import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { createRootToolUseContext } from '@delegate/context-isolation';
import { type AssistantMessage, type Tool, createUuid } from '@delegate/core';
import { z } from 'zod';
import { DEFAULT_MAX_TOOL_RESULT_CHARS, type ToolRunUpdate, runToolUses } from './run-tools.js';

/** The assistant message the tool calls came in (its content does not matter here). */
function assistantMessage(stopReason: 'tool_use' | 'max_tokens'): AssistantMessage {
  return {
    type: 'assistant',
    uuid: createUuid(),
    timestamp: new Date().toISOString(),
    message: {
      id: 'msg',
      role: 'assistant',
      model: 'm',
      content: [],
      stop_reason: stopReason,
      usage: { input_tokens: 0, output_tokens: 0 },
    },
  };
}

/** The result blocks of one run of `tool` called once with `{}`. */
async function resultsOf(tool: Tool, maxResultChars?: number) {
  const context = createRootToolUseContext({ cwd: tmpdir(), tools: [tool], model: 'm' });
  const results = [];
  for await (const update of runToolUses({
    toolUses: [{ type: 'tool_use', id: 'a', name: tool.name, input: {} }],
    assistantMessage: assistantMessage('tool_use'),
    context,
    canUseTool: async () => ({ behavior: 'allow' }),
    maxConcurrency: 1,
    ...(maxResultChars !== undefined ? { maxResultChars } : {}),
  }))
    if (update.type === 'result') results.push(update.result);
  return results;
}

function toolReturning(content: Awaited<ReturnType<Tool['call']>>['content']): Tool {
  return {
    name: 'Huge',
    inputSchema: z.object({}),
    description: () => 'returns a lot',
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    call: async () => ({ content }),
  };
}

describe('the size of a tool result', () => {
  const textOf = (result: { content?: unknown } | undefined): string =>
    (result?.content as { text: string }[]).map((block) => block.text).join('|');

  it('passes a result up to the limit on whole, and cuts a longer one with a note saying how much', async () => {
    const whole = 'w'.repeat(DEFAULT_MAX_TOOL_RESULT_CHARS);
    expect(textOf((await resultsOf(toolReturning(whole)))[0])).toBe(whole);

    const [cut] = await resultsOf(toolReturning('H'.repeat(DEFAULT_MAX_TOOL_RESULT_CHARS + 1234)));
    expect(textOf(cut)).toBe(
      `${'H'.repeat(DEFAULT_MAX_TOOL_RESULT_CHARS)}|[… 1234 more characters of this tool result were cut: one result is passed on up to ${DEFAULT_MAX_TOOL_RESULT_CHARS} characters.]`,
    );
  });

  it('cuts text blocks in order, drops the emptied ones, and takes its limit as an option', async () => {
    const [cut] = await resultsOf(
      toolReturning([
        { type: 'text', text: 'a'.repeat(6) },
        { type: 'text', text: 'b'.repeat(6) },
        { type: 'text', text: 'c'.repeat(6) },
      ]),
      10,
    );
    expect(textOf(cut)).toBe(
      'aaaaaa|bbbb|[… 8 more characters of this tool result were cut: one result is passed on up to 10 characters.]',
    );
  });
});

describe('runToolUses', () => {
  it("reports a failing permission check on its own call and keeps its siblings' results", async () => {
    const slow: Tool = {
      name: 'SlowRead',
      inputSchema: z.object({}),
      description: () => 'slow read',
      isReadOnly: () => true,
      isConcurrencySafe: () => true,
      call: async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return { content: 'slow result' };
      },
    };
    const risky: Tool = { ...slow, name: 'Risky', call: async () => ({ content: 'risky result' }) };
    const context = createRootToolUseContext({ cwd: tmpdir(), tools: [slow, risky], model: 'm' });
    const assistant = assistantMessage('tool_use');
    const updates: ToolRunUpdate[] = [];
    for await (const update of runToolUses({
      toolUses: [
        { type: 'tool_use', id: 'a', name: 'SlowRead', input: {} },
        { type: 'tool_use', id: 'b', name: 'Risky', input: {} },
      ],
      assistantMessage: assistant,
      context,
      canUseTool: async (tool) => {
        if (tool.name === 'Risky') throw new Error('the approval window was closed');
        return { behavior: 'allow' };
      },
      maxConcurrency: 4,
    })) {
      updates.push(update);
    }
    const results = updates.flatMap((update) =>
      update.type === 'result' ? [JSON.stringify(update.result)] : [],
    );
    expect(results[0]).toContain('slow result');
    expect(results[1]).toContain('the permission check failed: the approval window was closed');
  });

  it('does not run a call whose input JSON was cut off, and tells the model why', async () => {
    let calls = 0;
    const write: Tool = {
      name: 'Write',
      inputSchema: z.object({ file_path: z.string(), content: z.string() }).passthrough(),
      description: () => 'write',
      isReadOnly: () => false,
      isConcurrencySafe: () => false,
      call: async () => {
        calls++;
        return { content: 'written' };
      },
    };
    const context = createRootToolUseContext({ cwd: tmpdir(), tools: [write], model: 'm' });
    const assistant = assistantMessage('max_tokens');
    const results: string[] = [];
    for await (const update of runToolUses({
      toolUses: [
        {
          type: 'tool_use',
          id: 'cut',
          name: 'Write',
          // What the stream accumulator keeps for `{"file_path": "a.txt", "content": "very lo…`.
          input: { __invalid_json__: '{"file_path": "a.txt", "content": "very lo' },
        },
      ],
      assistantMessage: assistant,
      context,
      canUseTool: async () => ({ behavior: 'allow' }),
      maxConcurrency: 4,
    })) {
      if (update.type === 'result') results.push(JSON.stringify(update.result));
    }
    expect(calls).toBe(0);
    expect(results).toHaveLength(1);
    expect(results[0]).toContain('not complete JSON');
    expect(results[0]).toContain('"is_error":true');
  });
});
