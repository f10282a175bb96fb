import { z } from 'zod';

// C0 and C1 control characters, line breaks and tabs included (and the Unicode line and
// paragraph separators).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// Bidirectional marks, embeddings, overrides and isolates: they reorder what a reader sees.
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
// Characters that show nothing: a prompt made only of these (and whitespace) is empty.
const INVISIBLE = /[\s\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff]/gu;
// Characters that show nothing inside a name: `wor\u200bker` would look like `worker`. Unicode's
// default-ignorable code points are the complete list (zero-width characters, soft hyphen,
// joiners, variation selectors, Hangul fillers, tag characters, …).
const HIDDEN_IN_NAME = /\p{Default_Ignorable_Code_Point}/u;
// A space at either end cannot be seen: `worker ` would look like `worker`.
const SPACE_AT_END = /^\s|\s$/u;
// The shapes of agent ids (`a` + 16 hex digits, or `a<label>-<hex>`) and task ids (`t` + 12).
const ID_SHAPE = /^(?:a(?:[a-z0-9-]+-)?[0-9a-f]{16}|t[0-9a-f]{12})$/;

function hasVisibleText(text: string): boolean {
  return text.replace(INVISIBLE, '').length > 0;
}

function describeCharacter(text: string, pattern: RegExp): string {
  const found = pattern.exec(text)?.[0] ?? '';
  return `U+${(found.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** A one-line label: visible text, no control or bidirectional characters. */
function label(field: string, limits: { max?: number } = {}) {
  const text = z.string().min(1, `${field} must not be empty`);
  return (
    limits.max === undefined
      ? text
      : text.max(limits.max, `${field} must be at most ${limits.max} characters`)
  ).superRefine((text, context) => {
    if (CONTROL.test(text)) {
      context.addIssue({
        code: 'custom',
        message: `${field} must be one line of plain text: it contains the control character ${describeCharacter(text, CONTROL)} (line breaks and tabs included)`,
      });
    } else if (BIDI.test(text)) {
      context.addIssue({
        code: 'custom',
        message: `${field} must not contain bidirectional control characters, which reorder what a reader sees: it contains ${describeCharacter(text, BIDI)}`,
      });
    } else if (!hasVisibleText(text)) {
      context.addIssue({
        code: 'custom',
        message: `${field} must contain visible text, not only whitespace`,
      });
    }
  });
}

/** The fields of the Agent tool's input, as the model is shown them. */
export const AgentToolInputFields = z.object({
  description: label('description').describe('A short (3-5 word) description of the task'),
  prompt: z
    .string()
    .refine(hasVisibleText, {
      message: 'prompt must contain the task: it is empty or only whitespace',
    })
    .describe('The task for the agent to perform'),
  subagent_type: z
    .string()
    .optional()
    .describe('The agent type to use; leave it out to fork yourself when forking is available'),
  model: z
    .string()
    .optional()
    .describe('Model alias (sonnet, opus, haiku) or id; defaults to the agent definition'),
  run_in_background: z
    .boolean()
    .optional()
    .describe('Run in the background and be notified when it ends'),
  name: label('name', { max: 64 })
    .superRefine((name, context) => {
      // Control and bidirectional characters (some are default-ignorable too) are reported once, above.
      if (CONTROL.test(name) || BIDI.test(name)) return;
      if (HIDDEN_IN_NAME.test(name)) {
        context.addIssue({
          code: 'custom',
          message: `name must not contain invisible characters (zero-width spaces and joiners, soft hyphens, variation selectors, fillers, tag characters): they make one name look like another; it contains ${describeCharacter(name, HIDDEN_IN_NAME)}`,
        });
      } else if (SPACE_AT_END.test(name)) {
        context.addIssue({
          code: 'custom',
          message:
            'name must not begin or end with a space: nobody can see it, so the name would look like another',
        });
      }
    })
    .refine((name) => !ID_SHAPE.test(name), {
      message:
        'name must not look like an agent id (a + 16 hex digits) or a task id (t + 12 hex digits): SendMessage could confuse them',
    })
    .optional()
    .describe('A name to address the agent with SendMessage (unique in the session)'),
  isolation: z.literal('worktree').optional().describe('Run the agent in a fresh git worktree'),
  cwd: z
    .string()
    .optional()
    .describe('Working directory of the agent (absolute, or relative to yours)'),
  max_tokens: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      'Token budget of the agent and everything it starts (input, cache and output tokens); it never gets more than you have left',
    ),
  max_cost_usd: z
    .number()
    .positive()
    .optional()
    .describe(
      'Cost budget in US dollars of the agent and everything it starts; it never gets more than you have left',
    ),
});
// The budget fields follow the tool's snake_case; the definition keys' camelCase spelling
// (`maxTokens`, `maxCostUsd`) is read too rather than silently dropped.
const BUDGET_SPELLINGS = [
  ['maxTokens', 'max_tokens'],
  ['maxCostUsd', 'max_cost_usd'],
] as const;

function acceptBudgetSpellings(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const input = value as Record<string, unknown>;
  if (!BUDGET_SPELLINGS.some(([camel]) => camel in input)) return value;
  const copy: Record<string, unknown> = { ...input };
  for (const [camel, snake] of BUDGET_SPELLINGS) {
    if (!(camel in copy)) continue;
    if (copy[snake] === undefined) copy[snake] = copy[camel];
    delete copy[camel];
  }
  return copy;
}

/** Input of the Agent tool: {@link AgentToolInputFields}, also accepting `maxTokens`/`maxCostUsd`. */
export const AgentToolInput = z.preprocess(acceptBudgetSpellings, AgentToolInputFields);
/** Input of the Agent tool, as parsed. */
export type AgentToolInput = z.infer<typeof AgentToolInputFields>;
