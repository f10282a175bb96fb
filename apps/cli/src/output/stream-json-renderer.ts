import { type AgentEvent, type Message, createUuid } from '@delegate/core';
import type { QueryEvent } from '@delegate/runtime';
import { type AgentTree, MAIN_AGENT_ID } from '../usage/agent-tree.js';
import { resultFields } from './result-fields.js';
import type { RunRenderer, RunResult, RunStartInfo } from './run-renderer.js';

/**
 * NDJSON in the shape `claude -p --output-format stream-json --verbose` prints: a
 * `system`/`init` line first, `assistant` and `user` lines (sub-agent messages carry the
 * id of the `Agent` call that started them in `parent_tool_use_id`), one `delegate_event`
 * line per lifecycle event (sub-agents' `agent.cost` included, the main agent's left to the
 * result line), and a `result` line last.
 */
export class StreamJsonRenderer implements RunRenderer {
  private sessionId = '';

  constructor(
    private readonly write: (line: string) => void,
    private readonly tree: AgentTree,
  ) {}

  private emit(value: Record<string, unknown>): void {
    this.write(`${JSON.stringify(value)}\n`);
  }

  start(info: RunStartInfo): void {
    this.sessionId = info.sessionId;
    this.emit({
      type: 'system',
      subtype: 'init',
      cwd: info.cwd,
      session_id: info.sessionId,
      tools: info.tools,
      mcp_servers: info.mcpServers,
      model: info.model,
      permissionMode: info.permissionMode,
      slash_commands: [],
      apiKeySource: info.apiKeySource,
      output_style: 'default',
      agents: info.agents,
      uuid: createUuid(),
    });
  }

  onMainEvent(event: QueryEvent): void {
    if (event.type === 'assistant' || event.type === 'user') this.message(event, null);
  }

  onAgentEvent(event: AgentEvent): void {
    if (event.type === 'agent.message') {
      const node = this.tree.get(event.agentId);
      this.message(event.message, node?.toolUseId ?? null);
      return;
    }
    // The main agent's cost follows each of its responses; its totals are in the result line.
    if (event.type === 'agent.cost' && event.agentId === MAIN_AGENT_ID) return;
    this.emit({ type: 'delegate_event', event, session_id: this.sessionId, uuid: createUuid() });
  }

  private message(message: Message, parentToolUseId: string | null): void {
    if (message.type === 'assistant') {
      this.emit({
        type: 'assistant',
        message: { type: 'message', stop_sequence: null, ...message.message },
        parent_tool_use_id: parentToolUseId,
        session_id: this.sessionId,
        uuid: message.uuid,
      });
    } else if (message.type === 'user' && hasToolResult(message)) {
      this.emit({
        type: 'user',
        message: message.message,
        parent_tool_use_id: parentToolUseId,
        session_id: this.sessionId,
        uuid: message.uuid,
      });
    }
  }

  async finish(result: RunResult): Promise<void> {
    this.emit({ ...resultFields(result), uuid: createUuid() });
  }
}

function hasToolResult(message: Message): boolean {
  return (
    message.type === 'user' &&
    Array.isArray(message.message.content) &&
    message.message.content.some((block) => block.type === 'tool_result')
  );
}
