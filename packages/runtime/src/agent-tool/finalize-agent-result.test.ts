import { describe, expect, it } from 'vitest';
import {
  type AssistantMessage,
  type ContentBlock,
  createUserMessage,
  createUuid,
} from '@delegate/core';
import { formatAgentToolResult } from './agent-tool-output.js';
import { MAX_REPORT_CHARS, capReport, finalizeAgentTool } from './finalize-agent-result.js';

function assistant(
  content: ContentBlock[],
  usage = { input_tokens: 10, output_tokens: 5 },
): AssistantMessage {
  return {
    type: 'assistant',
    uuid: createUuid(),
    timestamp: new Date().toISOString(),
    message: { id: 'msg', role: 'assistant', model: 'm', content, stop_reason: 'end_turn', usage },
  };
}

describe('finalizeAgentTool', () => {
  it('returns the last assistant text with tool-use count and usage summed over the run', () => {
    const result = finalizeAgentTool(
      [
        createUserMessage({ content: 'task' }),
        assistant([{ type: 'tool_use', id: 't1', name: 'Read', input: {} }]),
        createUserMessage({ content: [{ type: 'tool_result', tool_use_id: 't1', content: 'x' }] }),
        assistant([{ type: 'text', text: 'final report' }], { input_tokens: 20, output_tokens: 7 }),
      ],
      'a1',
      { agentType: 'general-purpose', startTime: Date.now() - 5 },
    );
    expect(result.content).toEqual([{ type: 'text', text: 'final report' }]);
    expect(result.totalToolUseCount).toBe(1);
    expect(result.usage.input_tokens).toBe(30);
    expect(result.totalTokens).toBe(27);
    expect(result.totalDurationMs).toBeGreaterThanOrEqual(0);
  });

  it('falls back to the latest assistant message with text when the last one only calls tools', () => {
    const result = finalizeAgentTool(
      [
        assistant([{ type: 'text', text: 'partial findings' }]),
        assistant([{ type: 'tool_use', id: 't', name: 'Grep', input: {} }]),
      ],
      'a2',
      { agentType: 'Explore', startTime: Date.now() },
    );
    expect(result.content).toEqual([{ type: 'text', text: 'partial findings' }]);
  });

  it('explains a run without any assistant message', () => {
    expect(() =>
      finalizeAgentTool([createUserMessage({ content: 'x' })], 'a3', {
        agentType: 'Plan',
        startTime: 0,
      }),
    ).toThrow(/Agent a3 \(Plan\) produced no assistant message/);
  });

  it(`cuts a report over ${MAX_REPORT_CHARS.toLocaleString('en-US')} characters and says so in the result`, () => {
    const long = `${'a'.repeat(MAX_REPORT_CHARS)}THE-TAIL`;
    const result = finalizeAgentTool(
      [createUserMessage({ content: 'task' }), assistant([{ type: 'text', text: long }])],
      'a1',
      { agentType: 'general-purpose', startTime: Date.now() },
    );
    const text = formatAgentToolResult(
      { status: 'completed', ...result },
      { oneShotAgentTypes: new Set() },
    );
    expect(text).not.toContain('THE-TAIL');
    expect(text).toContain('[The report was cut: 100,000 of 100,008 characters shown.]');
    const report = result.content.map((block) => block.text).join('');
    expect(report.startsWith('a'.repeat(MAX_REPORT_CHARS))).toBe(true);
  });

  it('never splits a character made of two code units when it cuts', () => {
    const cut = capReport(`${'a'.repeat(9)}😀rest`, 10);
    expect(cut.startsWith(`${'a'.repeat(9)}\n`)).toBe(true);
    expect(cut).toContain('9 of 15 characters shown');
    expect(capReport('short', 10)).toBe('short');
  });
});
