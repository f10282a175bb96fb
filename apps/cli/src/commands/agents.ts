import { resolve } from 'node:path';
import type { AgentDiagnostic, getAgentDefinitionsWithOverrides } from '@delegate/agent-defs';
import type { AgentDefinition, PermissionRule, Tool } from '@delegate/core';
import type { CliIo } from '../cli-io.js';
import { EXIT_CODES, type ExitCode, UsageError } from '../exit-codes.js';
import { loadTools } from '../load-tools.js';
import { formatDiagnostic, reportLoadDiagnostics } from '../output/report-diagnostics.js';
import { readAgentsFlag } from '../session/load-flag-agents.js';
import { toPermissionRules } from '../session/permission-rules.js';
import { type IgnoredSetting, resolveConfig } from '../settings/resolve-config.js';
import { colorsFor } from '../terminal/colors.js';
import { formatTable, oneLine, printable, printableLines, styled } from '../terminal/format.js';
import { validatePaths } from './validate-paths.js';

type Loaded = Awaited<ReturnType<typeof getAgentDefinitionsWithOverrides>>;

/** The definitions a run in `cwd` would see, and the deny rules its settings give. */
async function loadDefinitions(options: { io: CliIo; cwd?: string; agents?: string }): Promise<{
  loaded: Loaded;
  cwd: string;
  denyRules: PermissionRule[];
  projectTrusted: boolean;
}> {
  const config = resolveConfig({
    flags: { cwd: options.cwd },
    env: options.io.env,
    processCwd: options.io.cwd,
  });
  const { getAgentDefinitionsWithOverrides } = await import('@delegate/agent-defs');
  const flagAgents = options.agents ? readAgentsFlag(options.agents, options.io.cwd) : undefined;
  const loaded = await getAgentDefinitionsWithOverrides({
    cwd: config.cwd,
    homeDir: config.homeDir,
    ...(flagAgents ? { flagAgents } : {}),
  });
  return {
    loaded,
    cwd: config.cwd,
    denyRules: await toPermissionRules(config.denyRules, 'deny'),
    projectTrusted: config.projectTrusted,
  };
}

/** The deny rule that hides an agent type from the Agent tool, as `Agent(x) from <source>`. */
async function deniedBy(
  agent: AgentDefinition,
  denyRules: PermissionRule[],
): Promise<string | undefined> {
  const { getDenyRuleForAgent, permissionRuleValueToString } =
    await import('@delegate/tool-filter');
  const rule = getDenyRuleForAgent({ denyRules }, 'Agent', agent.agentType);
  return rule ? `${permissionRuleValueToString(rule.ruleValue)} from ${rule.source}` : undefined;
}

/** The tools an agent gets after the three gates and its own lists, in the foreground and the background. */
async function resolvedTools(
  agent: AgentDefinition,
): Promise<{ foreground: string[]; background: string[] }> {
  const [{ getBuiltinTools }, { resolveAgentTools }] = await Promise.all([
    loadTools(),
    import('@delegate/tool-filter'),
  ]);
  // The runtime offers sub-agents the built-in tools and the Agent tool (the gates decide whether it stays).
  const pool: Array<Pick<Tool, 'name' | 'aliases'>> = [
    ...getBuiltinTools(),
    { name: 'Agent', aliases: ['Task'] },
  ];
  const names = (isAsync: boolean) =>
    resolveAgentTools(agent, pool, { isAsync, isMainThread: false }).resolvedTools.map(
      (tool) => tool.name,
    );
  return { foreground: names(false), background: names(true) };
}

function overrideNote(agent: AgentDefinition, loaded: Loaded): string {
  const same = loaded.allAgents.filter(
    (other) => other.agentType === agent.agentType && other !== agent,
  );
  const active = loaded.activeAgents.find((other) => other.agentType === agent.agentType);
  if (active !== agent) return `overridden by ${active?.source ?? '?'}`;
  if (same.length === 0) return '';
  return `overrides ${same.map((other) => other.source).join(', ')}`;
}

function location(agent: AgentDefinition): string {
  return agent.filePath ?? agent.source;
}

/** `delegate agents list`. */
export async function agentsListCommand(options: {
  io: CliIo;
  cwd?: string;
  agents?: string;
  json?: boolean;
}): Promise<ExitCode> {
  const { io } = options;
  const { loaded, denyRules } = await loadDefinitions(options);
  const rows = await Promise.all(
    loaded.allAgents.map(async (agent) => ({
      name: agent.agentType,
      source: agent.source,
      file: agent.filePath ?? null,
      active: loaded.activeAgents.includes(agent),
      overrides: overrideNote(agent, loaded),
      deniedBy: (await deniedBy(agent, denyRules)) ?? null,
      model: agent.model ?? '(default)',
      ...(agent.color ? { color: agent.color } : {}),
      ...(agent.background ? { background: true } : {}),
      tools: await resolvedTools(agent),
    })),
  );
  if (options.json) {
    io.stdout.write(
      `${JSON.stringify({ agents: rows, diagnostics: loaded.diagnostics }, null, 2)}\n`,
    );
    return EXIT_CODES.success;
  }
  const colors = colorsFor(io.stdout, io.env);
  const width = io.stdout.columns || 120;
  const table = formatTable([
    ['agent', 'source', 'notes', 'model', 'tools (foreground)', 'tools (background)'],
    ...rows.map((row) => [
      row.active ? row.name : styled(row.name, colors.dim),
      row.source,
      [
        row.overrides,
        row.overrides && row.deniedBy ? '; ' : '',
        styled(row.deniedBy ? `denied by ${row.deniedBy}` : '', colors.red),
      ],
      row.model,
      oneLine(row.tools.foreground.join(', ') || '(none)', Math.max(20, Math.floor(width / 4))),
      oneLine(row.tools.background.join(', ') || '(none)', Math.max(20, Math.floor(width / 4))),
    ]),
  ]);
  io.stdout.write(`${table.join('\n')}\n`);
  // Each definition that did not load, with its line, then the count.
  reportLoadDiagnostics(loaded.diagnostics, (line) => io.stderr.write(`${line}\n`));
  return EXIT_CODES.success;
}

/** `delegate agents show <name>`. */
export async function agentsShowCommand(options: {
  io: CliIo;
  name: string;
  cwd?: string;
  agents?: string;
  json?: boolean;
}): Promise<ExitCode> {
  const { io } = options;
  const { loaded, cwd, denyRules, projectTrusted } = await loadDefinitions(options);
  const agent = loaded.activeAgents.find((candidate) => candidate.agentType === options.name);
  if (!agent) {
    // A file meant to define it failed: say why first, instead of after the list of every
    // agent (hundreds in a cloned collection).
    const { explainUnknownAgentType } = await import('@delegate/agent-defs');
    throw new UsageError(
      explainUnknownAgentType(options.name, loaded.failedAgents) ??
        `No agent "${options.name}". Available: ${loaded.activeAgents.map((candidate) => candidate.agentType).join(', ')}.`,
    );
  }
  const tools = await resolvedTools(agent);
  const denied = await deniedBy(agent, denyRules);
  // What a run would not apply from this file while the project is not trusted.
  const untrusted: IgnoredSetting[] = [];
  if (!projectTrusted)
    (await import('@delegate/agent-defs')).restrictProjectAgent(agent, untrusted);
  const { getSystemPrompt: _prompt, ...fields } = agent;
  const systemPrompt = agent.getSystemPrompt({ cwd });
  const overrides = overrideNote(agent, loaded);
  if (options.json) {
    io.stdout.write(
      `${JSON.stringify({ ...fields, overrides, deniedBy: denied ?? null, ignoredUntrusted: untrusted.map(({ field, reason }) => ({ field, reason })), resolvedTools: tools, systemPrompt }, null, 2)}\n`,
    );
    return EXIT_CODES.success;
  }
  const colors = colorsFor(io.stdout, io.env);
  // Everything but the headings comes from the agent's file: a project's file may hold
  // escape sequences (in its description, prompt or even its file name).
  const lines = [
    colors.bold(printableLines(agent.agentType)),
    printable(`source:      ${agent.source}${overrides ? ` (${overrides})` : ''}`),
    ...(denied ? [printable(`denied:      by ${denied}; the Agent tool will not start it`)] : []),
    `location:    ${printableLines(location(agent))}`,
    `model:       ${printableLines(agent.model ?? '(default sub-agent model)')}`,
    ...(agent.permissionMode ? [printable(`permission:  ${agent.permissionMode}`)] : []),
    ...untrusted.map((entry) =>
      printable(`ignored:     ${entry.field}: ${entry.reason} (the project is not trusted)`),
    ),
    ...mcpServerLines(agent),
    ...(agent.maxTurns ? [`max turns:   ${agent.maxTurns}`] : []),
    ...(agent.memory ? [printable(`memory:      ${agent.memory}`)] : []),
    ...(agent.isolation ? [printable(`isolation:   ${agent.isolation}`)] : []),
    ...(agent.color ? [`color:       ${printableLines(agent.color)}`] : []),
    ...(agent.background ? ['background:  always'] : []),
    `tools:       ${printableLines(agent.tools ? agent.tools.join(', ') : '* (all)')}${agent.disallowedTools?.length ? `; not: ${printableLines(agent.disallowedTools.join(', '))}` : ''}`,
    printable(`foreground:  ${tools.foreground.join(', ') || '(none)'}`),
    printable(`background:  ${tools.background.join(', ') || '(none)'}`),
    '',
    colors.dim('when to use:'),
    printableLines(agent.whenToUse),
    '',
    colors.dim('system prompt:'),
    printableLines(systemPrompt),
  ];
  io.stdout.write(`${lines.join('\n')}\n`);
  return EXIT_CODES.success;
}

/** What `mcpServers` asks for: the session's servers it names, and those it starts itself. */
function mcpServerLines(agent: AgentDefinition): string[] {
  const parts = (agent.mcpServers ?? []).flatMap((entry) =>
    typeof entry === 'string'
      ? [`${entry} (the session's)`]
      : Object.entries(entry).map(([name, config]) => {
          const { command, args } = (config ?? {}) as { command?: unknown; args?: unknown };
          const words = [command, ...(Array.isArray(args) ? args : [])].map(String).join(' ');
          return typeof command === 'string'
            ? `${name} (its own, started for each run: ${words})`
            : `${name} (its own, which cannot start: no command)`;
        }),
  );
  return parts.length > 0 ? [`mcp servers: ${printable(parts.join('; '))}`] : [];
}

/**
 * The diagnostics `agents validate` prints: those of `paths` (else of every agent source of
 * the project), and those of `--agents` definitions, read as `delegate run` reads them.
 */
async function diagnosticsToValidate(options: {
  io: CliIo;
  paths: string[];
  cwd?: string;
  agents?: string;
}): Promise<AgentDiagnostic[]> {
  const { io } = options;
  const cwd = resolve(io.cwd, options.cwd ?? '.');
  const agents = options.agents === undefined ? {} : { agents: options.agents };
  if (options.paths.length === 0)
    return (await loadDefinitions({ io, cwd, ...agents })).loaded.diagnostics;
  const diagnostics = await validatePaths(options.paths, io.cwd);
  if (options.agents === undefined) return diagnostics;
  const { FLAG_AGENTS_LABEL } = await import('@delegate/agent-defs');
  const { loaded } = await loadDefinitions({ io, cwd, ...agents });
  return [
    ...diagnostics,
    ...loaded.diagnostics.filter((diagnostic) => diagnostic.filePath === FLAG_AGENTS_LABEL),
  ];
}

/** `delegate agents validate [paths…]`: every diagnostic; exit 1 when any file has an error. */
export async function agentsValidateCommand(options: {
  io: CliIo;
  paths: string[];
  cwd?: string;
  agents?: string;
  json?: boolean;
}): Promise<ExitCode> {
  const { io } = options;
  const diagnostics = await diagnosticsToValidate(options);
  const errors = diagnostics.filter((diagnostic) => diagnostic.severity === 'error').length;
  const warnings = diagnostics.filter((diagnostic) => diagnostic.severity === 'warning').length;
  if (options.json) {
    io.stdout.write(
      `${JSON.stringify({ ok: errors === 0, errors, warnings, diagnostics }, null, 2)}\n`,
    );
  } else {
    for (const diagnostic of diagnostics) io.stdout.write(`${formatDiagnostic(diagnostic)}\n`);
    io.stderr.write(
      `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}\n`,
    );
  }
  return errors > 0 ? EXIT_CODES.runFailed : EXIT_CODES.success;
}
