import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { createRootToolUseContext } from '@delegate/context-isolation';
import { type AssistantMessage, type Tool, createUuid } from '@delegate/core';
import { z } from 'zod';
import { type ToolRunUpdate, runToolUses } from './run-tools.js';

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
