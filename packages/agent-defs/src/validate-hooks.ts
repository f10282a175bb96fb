import { z } from 'zod';

const PositiveNumber = z.number().positive();

const HookCommand = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('command'),
    command: z.string(),
    timeout: PositiveNumber.optional(),
    async: z.boolean().optional(),
    once: z.boolean().optional(),
  }),
  z.looseObject({
    type: z.literal('prompt'),
    prompt: z.string(),
    timeout: PositiveNumber.optional(),
    once: z.boolean().optional(),
  }),
  z.looseObject({
    type: z.literal('agent'),
    prompt: z.string(),
    timeout: PositiveNumber.optional(),
    once: z.boolean().optional(),
  }),
  z.looseObject({
    type: z.literal('http'),
    url: z.url(),
    timeout: PositiveNumber.optional(),
    once: z.boolean().optional(),
  }),
  z.looseObject({
    type: z.literal('mcp_tool'),
    server: z.string(),
    tool: z.string(),
    timeout: PositiveNumber.optional(),
    once: z.boolean().optional(),
  }),
]);

const HookMatcher = z.looseObject({
  matcher: z.string().optional(),
  hooks: z.array(HookCommand),
});

/** The shape Claude Code requires of an agent's `hooks`: event names mapped to lists of matchers. */
export const AgentHooks = z.record(z.string(), z.array(HookMatcher));

const TYPE_WORDS: Readonly<Record<string, string>> = {
  record: 'a mapping',
  object: 'a mapping',
  array: 'a list',
  string: 'text',
  number: 'a number',
  boolean: 'true or false',
};

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type') {
    const expected = String((issue as { expected?: unknown }).expected);
    return `expected ${TYPE_WORDS[expected] ?? expected}`;
  }
  if (issue.code === 'too_small') return 'must be a positive number';
  return issue.code.replace(/_/g, ' ');
}

/**
 * Checks an agent's `hooks` value as Claude Code does, which loads an agent file without its
 * hooks (and refuses `--agents` JSON) when the value does not fit: a mapping of event names to lists of `{ matcher?, hooks: [...] }`,
 * each hook a `command`, `prompt`, `agent`, `http` or `mcp_tool` hook with its required field.
 * Returns where and why it does not fit (no file text quoted), or `undefined` when it does.
 */
export function validateHooks(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  const result = AgentHooks.safeParse(value);
  if (result.success) return undefined;
  const [issue] = result.error.issues;
  if (issue === undefined) return 'does not have the shape of hooks';
  const path = issue.path
    .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part).slice(0, 40)}`))
    .join('');
  return `hooks${path}: ${describeIssue(issue)}`;
}
