import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { DEFAULT_PRICE_TABLE, type PermissionMode, type PriceTable } from '@delegate/core';
import { UsageError } from '../exit-codes.js';
import { homeDirectory } from './home-directory.js';
import { type SettingsFile, findProjectRoot, loadSettingsFiles } from './load-settings.js';
import type { CliSettings, SettingOrigin } from './settings-schema.js';

/** A setting's value and where it came from. */
export type Sourced<T> = {
  /** The value in effect. */
  value: T;
  /** The layer that set it. */
  origin: SettingOrigin;
  /** The file or variable that set it, when there is one. */
  where?: string;
};

/** A setting of an untrusted project file that was not applied, and why. */
export type IgnoredSetting = {
  /** The settings file. */
  where: string;
  /** The field, such as `permissions.allow`. */
  field: string;
  /** Why it was not applied. */
  reason: string;
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
  trustProject?: boolean | undefined;
};

/** Everything a run uses, each value with its origin (what `delegate config` prints). */
export type EffectiveConfig = {
  /** The main agent's working directory. */
  cwd: string;
  /** The nearest ancestor of `cwd` with `.git`, else `cwd`. */
  projectRoot: string;
  /** The home directory (user settings, user agents, user memory, transcripts). */
  homeDir: string;
  /** Whether the project's own settings files may loosen permissions (see `IgnoredSetting`). */
  projectTrusted: boolean;
  /** Main model, alias or id. */
  model: Sourced<string>;
  /** Model of sub-agents whose definition and call name none (runtime default when unset). */
  subagentModel: Sourced<string | undefined>;
  /** Permission mode of the main agent. */
  permissionMode: Sourced<Exclude<PermissionMode, 'bubble'>>;
  /** Rules that approve calls, from every layer. */
  allowRules: Sourced<string>[];
  /** Rules that refuse calls, from every layer. */
  denyRules: Sourced<string>[];
  /** Rules that always ask, from every layer. */
  askRules: Sourced<string>[];
  /** Directories besides `cwd` the file tools may touch (absolute, existing). */
  additionalDirectories: Sourced<string>[];
  /** Whether an Agent call without `subagent_type` forks. */
  fork: Sourced<boolean>;
  /** Turn limit of each main-agent run. */
  maxTurns: Sourced<number | undefined>;
  /** Where transcripts go, or `false` for none. */
  transcriptDir: Sourced<string | false>;
  /** The `.mcp.json`-shaped file of stdio MCP servers. */
  mcpConfig: Sourced<string | undefined>;
  /** The price table: the built-in one with the files' `prices` over it. */
  prices: Sourced<PriceTable>;
  /** `ANTHROPIC_API_KEY` (never printed). */
  apiKey: Sourced<string | undefined>;
  /** `ANTHROPIC_BASE_URL`. */
  baseURL: Sourced<string | undefined>;
  /** The settings files that were read. */
  files: SettingsFile[];
  /** Settings of untrusted project files that were not applied. */
  ignored: IgnoredSetting[];
};

/** The default main model when nothing names one. */
export const DEFAULT_CLI_MODEL = 'sonnet';

type CliPermissionMode = Exclude<PermissionMode, 'bubble'>;

/** Modes that approve more than `default` does: a cloned repository may not pick them for you. */
export const LOOSER_MODES: ReadonlySet<CliPermissionMode> = new Set([
  'acceptEdits',
  'bypassPermissions',
]);

/** A settings file with the folder its relative paths are taken from. */
type Layer = { file: SettingsFile; base: string; settings: CliSettings };

/** A value of one layer, ready for `pick`. */
type Candidate<T> = { value: T | undefined; origin: SettingOrigin; where?: string };

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

/** A path from a settings file: `~/…` is under the home folder, a relative one under `base`. */
function settingsPath(value: string, base: string, homeDir: string): string {
  if (value === '~') return homeDir;
  if (value.startsWith('~/')) return join(homeDir, value.slice(2));
  return resolve(base, value);
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

function isInside(root: string, path: string): boolean {
  return path === root || path.startsWith(`${root}${sep}`);
}

/**
 * Where `path` really leads: the real path of its nearest existing ancestor with the rest
 * appended. A link anywhere on the way (`logs -> /elsewhere`) is followed, also when the
 * folder itself does not exist yet.
 */
function realDestination(path: string): string {
  const missing: string[] = [];
  let current = resolve(path);
  for (;;) {
    try {
      return join(realpathSync(current), ...missing.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return resolve(path);
      missing.push(basename(current));
      current = parent;
    }
  }
}

/** The last layer that sets a value wins; `fallback` when none does. */
function pick<T>(candidates: readonly Candidate<T>[], fallback: T): Sourced<T> {
  let chosen: Sourced<T> = { value: fallback, origin: 'default' };
  for (const candidate of candidates) {
    if (candidate.value === undefined) continue;
    chosen = {
      value: candidate.value,
      origin: candidate.origin,
      ...(candidate.where ? { where: candidate.where } : {}),
    };
  }
  return chosen;
}

/**
 * Whether the project's settings files may loosen what agents may do: only when the user's
 * own settings list the project in `trustedProjects`, or `--trust-project` is given.
 */
function isProjectTrusted(options: {
  files: readonly SettingsFile[];
  projectRoot: string;
  homeDir: string;
  flag: boolean | undefined;
}): boolean {
  if (options.flag) return true;
  const user = options.files.find((file) => file.origin === 'user');
  const root = realPath(options.projectRoot);
  return (user?.settings.trustedProjects ?? []).some(
    (entry) => realPath(settingsPath(entry, options.homeDir, options.homeDir)) === root,
  );
}

/**
 * A project or local file of an untrusted project keeps what can only restrict (deny and
 * ask rules, `plan`/`dontAsk`, models, limits) and loses what would widen access or run
 * programs: a looser permission mode, allow rules, extra directories, MCP servers, and a
 * transcript folder outside the project.
 */
function restrictUntrusted(
  layer: Layer,
  options: { projectRoot: string; homeDir: string },
  ignored: IgnoredSetting[],
): Layer {
  const { settings } = layer;
  const where = layer.file.path;
  const drop = (field: string, reason: string): void => void ignored.push({ where, field, reason });
  const kept: CliSettings = { ...settings };
  if (settings.permissionMode && LOOSER_MODES.has(settings.permissionMode)) {
    drop('permissionMode', `${settings.permissionMode} approves more than the default`);
    delete kept.permissionMode;
  }
  if (settings.mcpConfig) {
    drop('mcpConfig', 'MCP servers are programs the project would start');
    delete kept.mcpConfig;
  }
  const { allow, additionalDirectories, ...restricting } = settings.permissions ?? {};
  if (allow?.length) drop('permissions.allow', 'allow rules approve calls without asking');
  if (additionalDirectories?.length) {
    drop('permissions.additionalDirectories', 'they open directories outside the working one');
  }
  if (settings.permissions) kept.permissions = restricting;
  const transcripts = settings.transcriptDir;
  // Judged where the folder really is: read as the run reads it (`~/…` under the home folder),
  // and through any link on the way.
  if (
    typeof transcripts === 'string' &&
    !isInside(
      realPath(options.projectRoot),
      realDestination(settingsPath(transcripts, layer.base, options.homeDir)),
    )
  ) {
    drop('transcriptDir', 'it lies outside the project');
    delete kept.transcriptDir;
  }
  if (settings.trustedProjects) {
    drop('trustedProjects', 'only your user settings can trust a project');
    delete kept.trustedProjects;
  }
  return { ...layer, settings: kept };
}

/** The settings files as layers, with untrusted project files restricted. */
function settingsLayers(options: {
  files: readonly SettingsFile[];
  projectRoot: string;
  homeDir: string;
  trusted: boolean;
  ignored: IgnoredSetting[];
}): Layer[] {
  return options.files.map((file) => {
    // Paths in a settings file are relative to the folder that holds its `.delegate` folder.
    const layer: Layer = { file, base: dirname(dirname(file.path)), settings: file.settings };
    if (file.origin === 'user' || options.trusted) return layer;
    return restrictUntrusted(layer, options, options.ignored);
  });
}

/** Reads settings, flags and the environment into candidate values, lowest precedence first. */
class Candidates {
  constructor(
    private readonly layers: readonly Layer[],
    private readonly env: NodeJS.ProcessEnv,
    private readonly processCwd: string,
    private readonly homeDir: string,
  ) {}

  /** One value per layer, then the environment variable, then the flag. */
  scalar<T>(
    read: (settings: CliSettings) => T | undefined,
    extra: { env?: string; flag?: T | undefined; flagName?: string } = {},
  ): Candidate<T>[] {
    const candidates: Candidate<T>[] = this.layers.map((layer) => ({
      value: read(layer.settings),
      origin: layer.file.origin,
      where: layer.file.path,
    }));
    if (extra.env) {
      const value = this.env[extra.env];
      candidates.push({
        value: (value || undefined) as T | undefined,
        origin: 'env',
        where: extra.env,
      });
    }
    if (extra.flagName)
      candidates.push({ value: extra.flag, origin: 'flag', where: extra.flagName });
    return candidates;
  }

  /** A path per layer (taken from its base folder), then the environment, then the flag (from the current folder). */
  path(
    read: (settings: CliSettings) => string | false | undefined,
    extra: { env?: string; flag?: string | undefined; flagName: string },
  ): Candidate<string | false>[] {
    const fromFiles = this.layers.map((layer): Candidate<string | false> => {
      const value = read(layer.settings);
      return {
        value: typeof value === 'string' ? settingsPath(value, layer.base, this.homeDir) : value,
        origin: layer.file.origin,
        where: layer.file.path,
      };
    });
    const envValue = extra.env ? this.env[extra.env] : undefined;
    return [
      ...fromFiles,
      ...(extra.env
        ? [
            {
              // `~/…` as in a settings file: a quoted `~` reaches us unexpanded by the shell.
              value: envValue ? settingsPath(envValue, this.processCwd, this.homeDir) : undefined,
              origin: 'env' as const,
              where: extra.env,
            },
          ]
        : []),
      {
        value: extra.flag ? resolve(this.processCwd, extra.flag) : undefined,
        origin: 'flag',
        where: extra.flagName,
      },
    ];
  }

  /** Every layer's list, then the flag's values; paths taken from each one's base folder. */
  list(
    read: (settings: CliSettings) => readonly string[] | undefined,
    flag: { values: readonly string[] | undefined; name: string; paths?: boolean },
  ): Sourced<string>[] {
    const asPath = (value: string, base: string): string =>
      flag.paths ? settingsPath(value, base, this.homeDir) : value;
    return [
      ...this.layers.flatMap((layer) =>
        (read(layer.settings) ?? []).map((value) => ({
          value: asPath(value, layer.base),
          origin: layer.file.origin,
          where: layer.file.path,
        })),
      ),
      ...(flag.values ?? []).map((value) => ({
        value: asPath(value, this.processCwd),
        origin: 'flag' as const,
        where: flag.name,
      })),
    ];
  }
}

function mergePrices(layers: readonly Layer[]): Sourced<PriceTable> {
  const prices: Sourced<PriceTable> = { value: { ...DEFAULT_PRICE_TABLE }, origin: 'default' };
  for (const layer of layers) {
    if (!layer.settings.prices) continue;
    prices.value = { ...prices.value, ...layer.settings.prices };
    prices.origin = layer.file.origin;
    prices.where = layer.file.path;
  }
  return prices;
}

/**
 * Merges defaults, the user, project and local settings files, the environment and the
 * flags (later wins; permission rules and directories add up) into the configuration of a
 * run. A project that is not trusted cannot loosen permissions through its own files.
 * Throws a `UsageError` for a bad settings file or a directory that does not exist.
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
  const homeDir = homeDirectory(env);
  const projectRoot = findProjectRoot(cwd);
  const files = loadSettingsFiles({ cwd, homeDir });
  const trusted = isProjectTrusted({ files, projectRoot, homeDir, flag: flags.trustProject });
  const ignored: IgnoredSetting[] = [];
  const layers = settingsLayers({ files, projectRoot, homeDir, trusted, ignored });
  const read = new Candidates(layers, env, options.processCwd, homeDir);

  const additionalDirectories = read.list(
    (settings) => settings.permissions?.additionalDirectories,
    {
      values: flags.addDir,
      name: '--add-dir',
      paths: true,
    },
  );
  for (const directory of additionalDirectories) {
    existingDirectory(directory.value, `The extra directory (from ${directory.where})`);
  }
  const transcriptDir = pick(
    read.path((settings) => settings.transcriptDir, {
      env: 'DELEGATE_TRANSCRIPT_DIR',
      flag: flags.transcriptDir,
      flagName: '--transcript-dir',
    }),
    join(homeDir, '.delegate', 'transcripts'),
  );
  const mcpConfig = pick<string | false | undefined>(
    read.path((settings) => settings.mcpConfig, {
      flag: flags.mcpConfig,
      flagName: '--mcp-config',
    }),
    undefined,
  );
  return {
    cwd,
    projectRoot,
    homeDir,
    projectTrusted: trusted,
    model: pick(
      read.scalar((settings) => settings.model, {
        env: 'ANTHROPIC_MODEL',
        flag: flags.model,
        flagName: '--model',
      }),
      DEFAULT_CLI_MODEL,
    ),
    subagentModel: pick<string | undefined>(
      read.scalar((settings) => settings.subagentModel, { env: 'DELEGATE_SUBAGENT_MODEL' }),
      undefined,
    ),
    permissionMode: pick<CliPermissionMode>(
      read.scalar((settings) => settings.permissionMode, {
        flag: flags.permissionMode as CliPermissionMode | undefined,
        flagName: '--permission-mode',
      }),
      'default',
    ),
    allowRules: read.list((settings) => settings.permissions?.allow, {
      values: flags.allowedTools,
      name: '--allowed-tools',
    }),
    denyRules: read.list((settings) => settings.permissions?.deny, {
      values: flags.disallowedTools,
      name: '--disallowed-tools',
    }),
    askRules: read.list((settings) => settings.permissions?.ask, { values: undefined, name: '' }),
    additionalDirectories,
    fork: pick(
      read.scalar((settings) => settings.fork, { flag: flags.fork, flagName: '--fork/--no-fork' }),
      true,
    ),
    maxTurns: pick<number | undefined>(
      read.scalar((settings) => settings.maxTurns, {
        flag: flags.maxTurns,
        flagName: '--max-turns',
      }),
      undefined,
    ),
    transcriptDir,
    mcpConfig: { ...mcpConfig, value: mcpConfig.value || undefined },
    prices: mergePrices(layers),
    apiKey: pick<string | undefined>(
      read.scalar(() => undefined, { env: 'ANTHROPIC_API_KEY' }),
      undefined,
    ),
    baseURL: pick<string | undefined>(
      read.scalar(() => undefined, { env: 'ANTHROPIC_BASE_URL' }),
      undefined,
    ),
    files,
    ignored,
  };
}
