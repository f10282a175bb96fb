import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { DEFAULT_PRICE_TABLE, type PermissionMode, type PriceTable } from '@delegate/core';
import { UsageError } from '../exit-codes.js';
import { type SettingsFile, findProjectRoot, loadSettingsFiles } from './load-settings.js';
import type { SettingOrigin } from './settings-schema.js';

/** A setting's value and where it came from. */
export type Sourced<T> = {
  /** The value in effect. */
  value: T;
  /** The layer that set it. */
  origin: SettingOrigin;
  /** The file or variable that set it, when there is one. */
  where?: string;
};

/** The settings flags can set, as parsed from the command line. */
export type ConfigFlags = {
  model?: string | undefined;
  permissionMode?: PermissionMode | undefined;
  allowedTools?: string[] | undefined;
  disallowedTools?: string[] | undefined;
  maxTurns?: number | undefined;
  cwd?: string | undefined;
  addDir?: string[] | undefined;
  fork?: boolean | undefined;
  mcpConfig?: string | undefined;
  transcriptDir?: string | undefined;
};

/** Everything a run uses, each value with its origin (what `delegate config` prints). */
export type EffectiveConfig = {
  /** The main agent's working directory. */
  cwd: string;
  /** The nearest ancestor of `cwd` with `.git`, else `cwd`. */
  projectRoot: string;
  /** The home directory (user settings, user agents, user memory, transcripts). */
  homeDir: string;
  model: Sourced<string>;
  subagentModel: Sourced<string | undefined>;
  permissionMode: Sourced<Exclude<PermissionMode, 'bubble'>>;
  allowRules: Sourced<string>[];
  denyRules: Sourced<string>[];
  askRules: Sourced<string>[];
  additionalDirectories: Sourced<string>[];
  fork: Sourced<boolean>;
  maxTurns: Sourced<number | undefined>;
  transcriptDir: Sourced<string | false>;
  mcpConfig: Sourced<string | undefined>;
  prices: Sourced<PriceTable>;
  apiKey: Sourced<string | undefined>;
  baseURL: Sourced<string | undefined>;
  /** The settings files that were read. */
  files: SettingsFile[];
};

/** The default main model when nothing names one. */
export const DEFAULT_CLI_MODEL = 'sonnet';

/** Paths in a settings file are relative to the folder that holds its `.delegate` folder. */
function fileBase(file: SettingsFile): string {
  return dirname(dirname(file.path));
}

/** A path from a settings file: `~/…` is under the home folder, a relative one under `base`. */
function settingsPath(value: string, base: string, homeDir: string): string {
  if (value === '~') return homeDir;
  if (value.startsWith('~/')) return join(homeDir, value.slice(2));
  return resolve(base, value);
}

function existingDirectory(path: string, what: string): string {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) throw new UsageError(`${what} ${path} is not an existing directory.`);
  return path;
}

function pick<T>(
  layers: Array<{ value: T | undefined; origin: SettingOrigin; where?: string }>,
  fallback: T,
): Sourced<T> {
  let chosen: Sourced<T> = { value: fallback, origin: 'default' };
  for (const layer of layers) {
    if (layer.value !== undefined) {
      chosen = {
        value: layer.value,
        origin: layer.origin,
        ...(layer.where ? { where: layer.where } : {}),
      };
    }
  }
  return chosen;
}

/**
 * Merges defaults, the user, project and local settings files, the environment and the
 * flags (later wins; permission rules and directories add up) into the configuration of a
 * run. Throws a `UsageError` for a bad settings file or a directory that does not exist.
 */
export function resolveConfig(options: {
  flags: ConfigFlags;
  env: NodeJS.ProcessEnv;
  processCwd: string;
}): EffectiveConfig {
  const { flags, env } = options;
  const cwd = existingDirectory(
    resolve(options.processCwd, flags.cwd ?? '.'),
    'The working directory',
  );
  const homeDir = env['HOME'] && isAbsolute(env['HOME']) ? env['HOME'] : homedir();
  const files = loadSettingsFiles({ cwd, homeDir });
  const fromFiles = <T>(read: (file: SettingsFile) => T | undefined) =>
    files.map((file) => ({ value: read(file), origin: file.origin, where: file.path }));
  const fromFlag = <T>(value: T | undefined, flag: string) => ({
    value,
    origin: 'flag' as const,
    where: flag,
  });
  const fromEnv = (name: string) => ({
    value: env[name] || undefined,
    origin: 'env' as const,
    where: name,
  });

  const listFrom = (
    read: (file: SettingsFile) => string[] | undefined,
    flagValues: string[] | undefined,
    flag: string,
    resolvePath?: (value: string, base: string) => string,
  ): Sourced<string>[] => [
    ...files.flatMap((file) =>
      (read(file) ?? []).map((value) => ({
        value: resolvePath ? resolvePath(value, fileBase(file)) : value,
        origin: file.origin,
        where: file.path,
      })),
    ),
    ...(flagValues ?? []).map((value) => ({
      value: resolvePath ? resolvePath(value, options.processCwd) : value,
      origin: 'flag' as const,
      where: flag,
    })),
  ];
  const toAbsolute = (value: string, base: string) => settingsPath(value, base, homeDir);

  const transcriptFromFiles = files.map((file) => {
    const value = file.settings.transcriptDir;
    return {
      value: typeof value === 'string' ? settingsPath(value, fileBase(file), homeDir) : value,
      origin: file.origin,
      where: file.path,
    };
  });
  const prices: Sourced<PriceTable> = { value: { ...DEFAULT_PRICE_TABLE }, origin: 'default' };
  for (const file of files) {
    if (!file.settings.prices) continue;
    prices.value = { ...prices.value, ...file.settings.prices };
    prices.origin = file.origin;
    prices.where = file.path;
  }

  const additionalDirectories = listFrom(
    (file) => file.settings.permissions?.additionalDirectories,
    flags.addDir,
    '--add-dir',
    toAbsolute,
  );
  for (const directory of additionalDirectories) {
    existingDirectory(directory.value, `The extra directory (from ${directory.where})`);
  }

  return {
    cwd,
    projectRoot: findProjectRoot(cwd),
    homeDir,
    model: pick(
      [
        ...fromFiles((file) => file.settings.model),
        fromEnv('ANTHROPIC_MODEL'),
        fromFlag(flags.model, '--model'),
      ],
      DEFAULT_CLI_MODEL,
    ),
    subagentModel: pick<string | undefined>(
      [...fromFiles((file) => file.settings.subagentModel), fromEnv('DELEGATE_SUBAGENT_MODEL')],
      undefined,
    ),
    permissionMode: pick<Exclude<PermissionMode, 'bubble'>>(
      [
        ...fromFiles((file) => file.settings.permissionMode),
        fromFlag(
          flags.permissionMode as Exclude<PermissionMode, 'bubble'> | undefined,
          '--permission-mode',
        ),
      ],
      'default',
    ),
    allowRules: listFrom(
      (file) => file.settings.permissions?.allow,
      flags.allowedTools,
      '--allowed-tools',
    ),
    denyRules: listFrom(
      (file) => file.settings.permissions?.deny,
      flags.disallowedTools,
      '--disallowed-tools',
    ),
    askRules: listFrom((file) => file.settings.permissions?.ask, undefined, ''),
    additionalDirectories,
    fork: pick(
      [...fromFiles((file) => file.settings.fork), fromFlag(flags.fork, '--fork/--no-fork')],
      true,
    ),
    maxTurns: pick<number | undefined>(
      [...fromFiles((file) => file.settings.maxTurns), fromFlag(flags.maxTurns, '--max-turns')],
      undefined,
    ),
    transcriptDir: pick<string | false>(
      [
        ...transcriptFromFiles,
        {
          ...fromEnv('DELEGATE_TRANSCRIPT_DIR'),
          value: env['DELEGATE_TRANSCRIPT_DIR']
            ? resolve(options.processCwd, env['DELEGATE_TRANSCRIPT_DIR'])
            : undefined,
        },
        fromFlag(
          flags.transcriptDir ? resolve(options.processCwd, flags.transcriptDir) : undefined,
          '--transcript-dir',
        ),
      ],
      join(homeDir, '.delegate', 'transcripts'),
    ),
    mcpConfig: pick<string | undefined>(
      [
        ...files.map((file) => ({
          value: file.settings.mcpConfig
            ? settingsPath(file.settings.mcpConfig, fileBase(file), homeDir)
            : undefined,
          origin: file.origin,
          where: file.path,
        })),
        fromFlag(
          flags.mcpConfig ? resolve(options.processCwd, flags.mcpConfig) : undefined,
          '--mcp-config',
        ),
      ],
      undefined,
    ),
    prices,
    apiKey: pick<string | undefined>([fromEnv('ANTHROPIC_API_KEY')], undefined),
    baseURL: pick<string | undefined>([fromEnv('ANTHROPIC_BASE_URL')], undefined),
    files,
  };
}
