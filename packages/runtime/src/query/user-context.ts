import { type UserMessage, createUserMessage } from '@delegate/core';

/** Renders user context as the `<system-reminder>` block that opens the conversation. */
export function renderUserContext(context: Readonly<Record<string, string>>): string {
  const body = Object.keys(context)
    .sort()
    .map((key) => `# ${key}\n${context[key]}`)
    .join('\n\n');
  return `<system-reminder>\nUse this context where it is relevant to the task:\n\n${body}\n</system-reminder>`;
}

/** The user-context reminder that opens the conversation, or undefined when there is none. */
export function userContextReminder(
  userContext: Readonly<Record<string, string>> | undefined,
): UserMessage | undefined {
  if (!userContext || Object.keys(userContext).length === 0) return undefined;
  return createUserMessage({ content: renderUserContext(userContext), isMeta: true });
}
