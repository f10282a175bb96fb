import { PermissionMode } from '@delegate/core';
import { z } from 'zod';
import { UsageError } from '../exit-codes.js';
import type { ConfigFlags } from '../settings/resolve-config.js';

import { OUTPUT_FORMATS } from './run-choices.js';

export type { OutputFormat } from './run-choices.js';

/**
 * A flag's text value; an empty one (`--resume ""`, or only white space: `--model "  "`) is
 * refused with what the flag takes.
 */
function text(what: string) {
  return z.string().refine((value) => value.trim() !== '', `expected ${what}, not an empty value`);
}

/** The options of `delegate run` (and `delegate -p`), validated. */
export const RunFlags = z.object({
  model: text('a model: sonnet, opus, haiku or a model id').optional(),
  agent: text('the name of an agent (`delegate agents list` shows them)').optional(),
  agents: text('agent definitions as JSON text, or the path of a JSON file').optional(),
  permissionMode: PermissionMode.exclude(['bubble']).optional(),
  allowedTools: z.array(z.string()).optional(),
  disallowedTools: z.array(z.string()).optional(),
  maxTurns: z.number().int().positive().optional(),
  cwd: text('a directory').optional(),
  addDir: z.array(text('a directory')).optional(),
  fork: z.boolean().optional(),
  mcpConfig: text('the path of a .mcp.json-shaped file').optional(),
  transcriptDir: text('a directory').optional(),
  resume: text('the id of a recorded session (`delegate transcripts list` shows them)').optional(),
  outputFormat: z.enum(OUTPUT_FORMATS).default('text'),
  sim: z.union([text('a policy module'), z.literal(true)]).optional(),
  verbose: z.boolean().optional(),
  trustProject: z.boolean().optional(),
});
export type RunFlags = z.infer<typeof RunFlags>;

/** Validates parsed command-line options; a bad one is a `UsageError` naming the flag. */
export function parseRunFlags(options: Record<string, unknown>): RunFlags {
  const parsed = RunFlags.safeParse(options);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const flag = String(issue?.path[0] ?? 'options').replace(
    /[A-Z]/g,
    (letter) => `-${letter.toLowerCase()}`,
  );
  throw new UsageError(`--${flag}: ${issue?.message ?? 'invalid value'}.`);
}

/** The part of the run flags that settings files can also set. */
export function configFlags(flags: RunFlags): ConfigFlags {
  return {
    model: flags.model,
    permissionMode: flags.permissionMode,
    allowedTools: flags.allowedTools,
    disallowedTools: flags.disallowedTools,
    maxTurns: flags.maxTurns,
    cwd: flags.cwd,
    addDir: flags.addDir,
    fork: flags.fork,
    mcpConfig: flags.mcpConfig,
    transcriptDir: flags.transcriptDir,
    trustProject: flags.trustProject,
  };
}
