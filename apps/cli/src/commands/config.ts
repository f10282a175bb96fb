import type { CliIo } from '../cli-io.js';
import { EXIT_CODES, type ExitCode } from '../exit-codes.js';
import { checkModels } from '../session/check-models.js';
import { checkTranscriptFolder } from '../session/check-transcript-folder.js';
import { toPermissionRules } from '../session/permission-rules.js';
import { type EffectiveConfig, type Sourced, resolveConfig } from '../settings/resolve-config.js';
import { settingsPaths } from '../settings/load-settings.js';
import { colorsFor } from '../terminal/colors.js';
import { type RunFlags, configFlags } from './run-flags.js';
import { formatTable, printable, printableLines, styled } from '../terminal/format.js';

function origin(sourced: Sourced<unknown>): string {
  return sourced.where ? `${sourced.origin} (${sourced.where})` : sourced.origin;
}

function secret(value: string | undefined): string {
  return value ? 'set (hidden)' : 'not set';
}

/** A URL without what could be a credential (user, password, query). */
function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    const hidden = url.username || url.password || url.search;
    url.username = '';
    url.password = '';
    url.search = '';
    return hidden ? `${url.href} (credentials hidden)` : url.href;
  } catch {
    return 'set (not a URL; hidden)';
  }
}

/** The effective settings as rows of setting, value, origin; secrets are never shown. */
export function describeConfig(
  config: EffectiveConfig,
): Array<{ setting: string; value: unknown; origin: string }> {
  const rows: Array<{ setting: string; value: unknown; origin: string }> = [
    { setting: 'cwd', value: config.cwd, origin: '--cwd, or the current directory' },
    { setting: 'projectRoot', value: config.projectRoot, origin: 'nearest folder with .git' },
    {
      setting: 'projectTrusted',
      value: config.projectTrusted,
      origin: config.projectTrusted ? 'trustedProjects or --trust-project' : 'default',
    },
    { setting: 'model', value: config.model.value, origin: origin(config.model) },
    {
      setting: 'subagentModel',
      value: config.subagentModel.value ?? '(runtime default)',
      origin: origin(config.subagentModel),
    },
    {
      setting: 'permissionMode',
      value: config.permissionMode.value,
      origin: origin(config.permissionMode),
    },
    { setting: 'fork', value: config.fork.value, origin: origin(config.fork) },
    {
      setting: 'maxTurns',
      value: config.maxTurns.value ?? '(none)',
      origin: origin(config.maxTurns),
    },
    {
      setting: 'transcriptDir',
      value: config.transcriptDir.value,
      origin: origin(config.transcriptDir),
    },
    {
      setting: 'mcpConfig',
      value: config.mcpConfig.value ?? '(none)',
      origin: origin(config.mcpConfig),
    },
    {
      setting: 'prices',
      value: `${Object.keys(config.prices.value).length} models`,
      origin: origin(config.prices),
    },
    {
      setting: 'ANTHROPIC_API_KEY',
      value: secret(config.apiKey.value),
      origin: origin(config.apiKey),
    },
    {
      setting: 'ANTHROPIC_BASE_URL',
      value: config.baseURL.value ? redactUrl(config.baseURL.value) : 'not set',
      origin: origin(config.baseURL),
    },
  ];
  const lists: Array<[string, Sourced<string>[]]> = [
    ['permissions.allow', config.allowRules],
    ['permissions.deny', config.denyRules],
    ['permissions.ask', config.askRules],
    ['permissions.additionalDirectories', config.additionalDirectories],
  ];
  for (const [setting, entries] of lists) {
    if (entries.length === 0) rows.push({ setting, value: '(none)', origin: 'default' });
    for (const entry of entries) rows.push({ setting, value: entry.value, origin: origin(entry) });
  }
  for (const entry of config.ignored) {
    rows.push({
      setting: entry.field,
      value: '(ignored: project not trusted)',
      origin: `${entry.where}: ${entry.reason}`,
    });
  }
  return rows;
}

/**
 * The checks `delegate run` makes of the settings before it starts anything, with its errors
 * (a model that is only white space, a string that is no permission rule, a file where the
 * transcript folder should be: `UsageError`, exit code 2) and its warnings on stderr (a rule
 * naming a built-in tool in another case), so `config` never shows as fine what `run` refuses.
 */
async function checkAsRunDoes(config: EffectiveConfig, io: CliIo): Promise<void> {
  checkModels(config);
  if (config.transcriptDir.value !== false)
    checkTranscriptFolder(config.transcriptDir.value, config.transcriptDir.where);
  const warn = (message: string): void =>
    void io.stderr.write(`delegate: ${printableLines(message)}\n`);
  await toPermissionRules(config.allowRules, 'allow', warn);
  await toPermissionRules(config.denyRules, 'deny', warn);
  await toPermissionRules(config.askRules, 'ask', warn);
}

/** `delegate config`: every effective setting with where it came from. */
export async function configCommand(options: {
  io: CliIo;
  flags: RunFlags;
  json: boolean;
}): Promise<ExitCode> {
  const { io } = options;
  const config = resolveConfig({
    flags: configFlags(options.flags),
    env: io.env,
    processCwd: io.cwd,
  });
  await checkAsRunDoes(config, io);
  const rows = describeConfig(config);
  const files = settingsPaths({ cwd: config.cwd, homeDir: config.homeDir }).map((file) => ({
    ...file,
    found: config.files.some((found) => found.path === file.path),
  }));
  if (options.json) {
    io.stdout.write(`${JSON.stringify({ settings: rows, files }, null, 2)}\n`);
    return EXIT_CODES.success;
  }
  const colors = colorsFor(io.stdout, io.env);
  const table = formatTable([
    ['setting', 'value', 'from'],
    ...rows.map((row) => [row.setting, String(row.value), styled(row.origin, colors.dim)]),
  ]);
  io.stdout.write(`${table.join('\n')}\n\nSettings files:\n`);
  for (const file of files)
    io.stdout.write(
      `  ${file.origin.padEnd(8)} ${printable(file.path)}${file.found ? '' : colors.dim(' (not present)')}\n`,
    );
  return EXIT_CODES.success;
}
