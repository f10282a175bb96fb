import {
  type AssistantMessage,
  type ContentBlock,
  DelegateError,
  type Message,
  type ToolResultBlock,
  type ToolUseBlock,
  createUserMessage,
  createUuid,
  checkObject,
} from '@delegate/core';
import { type ForkLayout, DEFAULT_FORK_LAYOUT, assertForkLayout } from './fork-layout.js';
import {
  type ForkRulesPlacement,
  assertForkRulesPlacement,
  buildForkDirectiveLine,
  buildForkRulesBlock,
} from './fork-worker-rules.js';
import { FORK_PLACEHOLDER_RESULT } from './fork-constants.js';

/** Options of `buildForkChildMessages`. */
export type BuildForkChildMessagesOptions = {
  /** The child's own task; it goes into the last block, the only one that differs per sibling. */
  directive: string;
  /** The parent's assistant turn that called the Agent tool; never changed. */
  assistantMessage: AssistantMessage;
  /**
   * Id of the `tool_use` that starts this child. Required by `per-child` when the turn holds
   * more than one call; checked when given.
   */
  toolUseId?: string;
  /** The layout (default `DEFAULT_FORK_LAYOUT`). */
  layout?: ForkLayout;
  /** Where the worker rules are (default `child-message`: in their own block of this message). */
  rulesPlacement?: ForkRulesPlacement;
};

const WHERE = 'buildForkChildMessages';

function checkOptions(options: BuildForkChildMessagesOptions): {
  layout: ForkLayout;
  rulesPlacement: ForkRulesPlacement;
} {
  checkObject(`${WHERE}()`, 'options', options);
  if (typeof options.directive !== 'string') {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${WHERE}: directive must be a string, got ${typeof options.directive}.`,
    );
  }
  const content: unknown = options.assistantMessage?.message?.content;
  if (options.assistantMessage?.type !== 'assistant' || !Array.isArray(content)) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${WHERE}: assistantMessage must be the parent's assistant message (type 'assistant' with content blocks).`,
    );
  }
  return {
    layout: assertForkLayout(options.layout ?? DEFAULT_FORK_LAYOUT, WHERE),
    rulesPlacement: assertForkRulesPlacement(options.rulesPlacement ?? 'child-message', WHERE),
  };
}

function ownToolUse(toolUses: readonly ToolUseBlock[], toolUseId: string | undefined): string {
  if (toolUseId !== undefined && toolUses.some((block) => block.id === toolUseId)) return toolUseId;
  // A turn with a single call leaves no doubt about whose it is.
  const [only, ...others] = toolUses;
  if (toolUseId === undefined && only && others.length === 0) return only.id;
  const ids = toolUses.map((block) => block.id).join(', ');
  throw new DelegateError(
    'INVALID_ARGUMENT',
    toolUseId === undefined
      ? `${WHERE}: the per-child layout needs toolUseId, the id of the tool_use that starts this child (the message holds ${ids}).`
      : `${WHERE}: toolUseId "${toolUseId}" is not a tool_use of the assistant message (it holds ${ids}).`,
    { details: { toolUseId, toolUseIds: toolUses.map((block) => block.id) } },
  );
}

/** A deep copy without breakpoints: the child places its own, and the parent's must not leak. */
function copyBlocks(blocks: readonly ContentBlock[]): ContentBlock[] {
  const copied = structuredClone(blocks) as ContentBlock[];
  for (const block of copied) if ('cache_control' in block) delete block.cache_control;
  return copied;
}

function placeholderFor(toolUse: ToolUseBlock): ToolResultBlock {
  // Every result carries the same text in the same (array) form, whatever the tool did.
  return {
    type: 'tool_result',
    tool_use_id: toolUse.id,
    content: [{ type: 'text', text: FORK_PLACEHOLDER_RESULT }],
  };
}

/**
 * Builds the messages a fork child appends to the parent's history, in the chosen layout:
 * a copy of the parent's assistant turn under a new uuid (`shared-message`: every block;
 * `per-child`: thinking, text and only the child's own `tool_use`), then one user message
 * with a placeholder `tool_result` per copied `tool_use`, the worker rules in a text block of
 * their own (identical for every sibling, so one cache entry can serve them all), and last
 * the directive line, the only block that differs between siblings. Breakpoints on copied
 * blocks are dropped (place the child's own with `planForkBreakpoints`). Without any
 * `tool_use` the result is one user message with the rules and the directive. Pure: the
 * input is never changed.
 */
export function buildForkChildMessages(options: BuildForkChildMessagesOptions): Message[] {
  const { layout, rulesPlacement } = checkOptions(options);
  const { assistantMessage, toolUseId } = options;
  const source = assistantMessage.message.content;
  const toolUses = source.filter((block): block is ToolUseBlock => block.type === 'tool_use');
  const rulesBlock: ContentBlock = { type: 'text', text: buildForkRulesBlock(rulesPlacement) };
  const directiveBlock: ContentBlock = {
    type: 'text',
    text: buildForkDirectiveLine(options.directive),
  };
  if (toolUses.length === 0) {
    return [createUserMessage({ content: [rulesBlock, directiveBlock] })];
  }
  const ownId =
    layout === 'per-child' || toolUseId !== undefined ? ownToolUse(toolUses, toolUseId) : undefined;
  const kept =
    layout === 'per-child'
      ? source.filter((block) => block.type !== 'tool_use' || block.id === ownId)
      : source;
  const content = copyBlocks(kept);
  const copiedToolUses = content.filter(
    (block): block is ToolUseBlock => block.type === 'tool_use',
  );
  const forkedAssistant: AssistantMessage = {
    ...assistantMessage,
    uuid: createUuid(),
    message: { ...structuredClone(assistantMessage.message), content },
  };
  const resultMessage = createUserMessage({
    content: [...copiedToolUses.map(placeholderFor), rulesBlock, directiveBlock],
  });
  return [forkedAssistant, resultMessage];
}
