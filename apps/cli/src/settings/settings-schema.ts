import { PermissionMode, PriceTable } from '@delegate/core';
import { z } from 'zod';

/** Permission rules and extra directories, in the strings settings files use. */
export const PermissionSettings = z
  .object({
    /** Rules that approve calls without asking, such as `Bash(npm test:*)` or `Edit`. */
    allow: z.array(z.string().min(1)).optional(),
    /** Rules that refuse calls (and hide agent types: `Agent(Explore)`). */
    deny: z.array(z.string().min(1)).optional(),
    /** Rules that always ask. */
    ask: z.array(z.string().min(1)).optional(),
    /** Directories besides the working directory that file tools may touch. */
    additionalDirectories: z.array(z.string().min(1)).optional(),
  })
  .strict();
export type PermissionSettings = z.infer<typeof PermissionSettings>;

/**
 * One settings file: `~/.delegate/settings.json` (user), `<project>/.delegate/settings.json`
 * (project, commit it) or `<project>/.delegate/settings.local.json` (local, ignore it in git).
 * Every field is optional; a later file overrides an earlier one, and permission lists add up.
 */
export const CliSettings = z
  .object({
    /** Optional JSON-schema reference; ignored. */
    $schema: z.string().optional(),
    /** Main model: an alias (`sonnet`, `opus`, `haiku`) or a model id. */
    model: z.string().min(1).optional(),
    /** Model of sub-agents whose definition and call name none. */
    subagentModel: z.string().min(1).optional(),
    /** Permission mode of the main agent. */
    permissionMode: PermissionMode.exclude(['bubble']).optional(),
    /** Permission rules. */
    permissions: PermissionSettings.optional(),
    /** Whether an `Agent` call without `subagent_type` forks the caller (default true). */
    fork: z.boolean().optional(),
    /** Turn limit of one main-agent run. */
    maxTurns: z.number().int().positive().optional(),
    /** Where transcripts go, or `false` for none (default `~/.delegate/transcripts`). */
    transcriptDir: z.union([z.string().min(1), z.literal(false)]).optional(),
    /** A `.mcp.json`-shaped file of stdio MCP servers. */
    mcpConfig: z.string().min(1).optional(),
    /** Prices per model that replace or add to the built-in table (US dollars per million tokens). */
    prices: PriceTable.optional(),
    /**
     * Projects (their root folders) whose own settings files may loosen permissions: a looser
     * mode, allow rules, extra directories, MCP servers. Read from the user settings only.
     */
    trustedProjects: z.array(z.string().min(1)).optional(),
  })
  .strict();
export type CliSettings = z.infer<typeof CliSettings>;

/** Where a setting came from, lowest precedence first. */
export const SETTING_ORIGINS = ['default', 'user', 'project', 'local', 'env', 'flag'] as const;
export type SettingOrigin = (typeof SETTING_ORIGINS)[number];
