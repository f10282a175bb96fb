import { Command, InvalidArgumentError, Option } from 'commander';
import { type CliIo, enterCwdFlagIfCurrentGone } from './cli-io.js';
import { EXIT_CODES, type ExitCode, UsageError } from './exit-codes.js';
import {
  PIPED_INPUT_WAIT_MS,
  joinPromptAndInput,
  readAllInput,
  readInputBesidePrompt,
} from './piped-input.js';
import { CLI_PERMISSION_MODES, OUTPUT_FORMATS } from './commands/run-choices.js';
import { printableLines } from './terminal/format.js';

/** Validates the options (zod is loaded only when a command runs, not for --help or --version). */
async function parseRunFlags(options: Record<string, unknown>) {
  const { parseRunFlags: parse } = await import('./commands/run-flags.js');
  return parse(options);
}

declare const __DELEGATE_CLI_VERSION__: string | undefined;

/** The CLI's version (set when the bundle is built). */
export const CLI_VERSION =
  typeof __DELEGATE_CLI_VERSION__ === 'string' ? __DELEGATE_CLI_VERSION__ : '0.0.0-dev';

function positiveInteger(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number < 1) {
    throw new InvalidArgumentError('expected a whole number of 1 or more.');
  }
  return number;
}

function port(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || number > 65_535)
    throw new InvalidArgumentError('expected a port number (0 to 65535).');
  return number;
}

/** A listening address: an empty one would mean every interface, which nobody asks for by leaving it blank. */
function host(value: string): string {
  if (value.trim() === '')
    throw new InvalidArgumentError(
      'expected an address, such as 127.0.0.1 (the default), ::1, or 0.0.0.0 for every interface.',
    );
  return value.trim();
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}\n`;
}

/** Adds the options settings files can also set (shared by runs and `delegate config`). */
function addSettingOptions(command: Command): Command {
  return command
    .option('--model <model>', 'main model: sonnet, opus, haiku or a model id')
    .addOption(
      new Option('--permission-mode <mode>', 'how tool calls are approved').choices(
        CLI_PERMISSION_MODES,
      ),
    )
    .option(
      '--allowed-tools <rules>',
      'rules that approve calls, e.g. "Bash(git diff:*) Edit" (repeatable)',
      collect,
    )
    .option(
      '--disallowed-tools <rules>',
      'rules that refuse calls, e.g. "Bash(rm:*)" (repeatable)',
      collect,
    )
    .option('--max-turns <n>', 'turn limit of each main-agent run', positiveInteger)
    .option('--cwd <dir>', 'working directory of the main agent (default: the current one)')
    .option('--add-dir <dir>', 'another directory the file tools may touch (repeatable)', collect)
    .option('--fork', 'an Agent call without subagent_type forks the caller (the default)')
    .option('--no-fork', 'every Agent call starts a fresh agent')
    .option('--mcp-config <file>', 'stdio MCP servers, in the .mcp.json shape')
    .option('--transcript-dir <dir>', 'where transcripts go (default ~/.delegate/transcripts)')
    .option(
      '--trust-project',
      "let this project's own settings and agent files loosen permissions (mode, allow rules, directories, MCP servers, agent hooks)",
    );
}

/** Adds the options of a run (shared by `delegate run`, `delegate -p` and interactive mode). */
function addRunOptions(command: Command): Command {
  return addSettingOptions(command)
    .option(
      '--agent <name>',
      "run the main thread as this agent's definition (prompt, tools, model)",
    )
    .option(
      '--agents <json|file>',
      'extra agent definitions as JSON, as `claude --agents` takes (text or a file)',
    )
    .option('--resume <session-id>', 'continue a recorded session')
    .addOption(
      new Option(
        '--output-format <format>',
        'text, json (one object at the end) or stream-json (NDJSON)',
      )
        .choices(OUTPUT_FORMATS)
        .default('text'),
    )
    .option(
      '--sim [policy-module]',
      'answer from the bundled simulator instead of the API (it repeats your prompt, or runs a policy module: one word ending in .js, .mjs or .cjs, or .ts, .mts or .cts under a TypeScript loader; any other value is the prompt)',
    )
    .option('--verbose', 'accepted for compatibility with `claude -p --verbose`');
}

/**
 * File names `--sim [policy-module]` takes as a module: one word (no white space) ending in a
 * module extension; any other value starts the prompt.
 */
const POLICY_MODULE_NAME = /^\S+\.(?:[cm]?js|[cm]?ts)$/;

/**
 * `--sim` takes an optional policy module, so in `delegate run --sim "hi"` the prompt would
 * be taken for a module. Only a single word ending in a module extension (`.mjs`, `.ts`, …)
 * is one; any other value (`README.md`, even when that file exists, or
 * `"Explain src/index.ts"`) is the start of the prompt.
 */
function splitSimValue(options: Record<string, unknown>): {
  options: Record<string, unknown>;
  promptStart?: string;
} {
  const sim = options['sim'];
  if (typeof sim !== 'string' || POLICY_MODULE_NAME.test(sim)) return { options };
  return { options: { ...options, sim: true }, promptStart: sim };
}

/**
 * The prompt of a run: the prompt argument, with the text piped in on stdin after it (as
 * `cat logs.txt | claude -p "explain"` sends both); without a prompt argument, stdin alone.
 */
async function promptWithInput(prompt: string, io: CliIo): Promise<string> {
  if (io.stdin.isTTY === true) return prompt;
  if (prompt === '') return readAllInput(io.stdin);
  const input = await readInputBesidePrompt(io.stdin);
  if (input.waited) {
    io.stderr.write(
      `delegate: stdin gave no input within ${PIPED_INPUT_WAIT_MS / 1000}s, so the prompt runs without it (pass < /dev/null to skip the wait).\n`,
    );
  }
  return joinPromptAndInput(prompt, input.text);
}

/**
 * Words after `delegate` that are no command: a mistyped command, or a prompt given without
 * `run` or `-p`, or a `-p` prompt left unquoted.
 */
function strayWords(words: readonly string[], print: unknown): UsageError {
  const quoted = JSON.stringify(
    [typeof print === 'string' ? print : '', ...words].join(' ').trim(),
  );
  if (typeof print === 'string') {
    return new UsageError(`-p takes the prompt as one argument; quote it: delegate -p ${quoted}.`);
  }
  return new UsageError(
    `unknown command '${words[0]}'. The commands are run, demo, agents, transcripts, memory, sim, config and help (delegate --help). To run a prompt: delegate run ${quoted}.`,
  );
}

/** The error for a run without a prompt: none in the arguments, and none on stdin. */
function emptyPrompt(fromTerminal: boolean): UsageError {
  return new UsageError(
    fromTerminal
      ? 'The prompt is empty. Pass it as an argument (delegate run "<prompt>"), or pipe it in on stdin (echo "<prompt>" | delegate run, or delegate -p).'
      : 'The prompt is empty (no prompt argument, and stdin gave no text). Pass it as an argument (delegate run "<prompt>"), or pipe text in (echo "<prompt>" | delegate run).',
  );
}

/**
 * Refuses, as a run would, a `--sim` module that cannot be loaded, with the error saying the
 * word was taken for a module (checked when the prompt is empty, before saying so).
 */
async function checkSimModule(path: string, io: CliIo): Promise<void> {
  const { loadPolicyModule } = await import('./session/load-policy-module.js');
  await loadPolicyModule({ path, processCwd: io.cwd, flag: '--sim' });
}

/** What every command's action needs: the process, and where to record the exit code. */
type CommandContext = { io: CliIo; done: (code: ExitCode) => void };

/** `delegate [-p]` (interactive, or one prompt) and `delegate run`. */
function registerRunCommands(program: Command, { io, done }: CommandContext): void {
  // Stdin that is not a terminal (a pipe, a file) is the prompt, or follows the prompt words.
  const run = async (prompt: string, rawOptions: Record<string, unknown>): Promise<void> => {
    const { options, promptStart } = splitSimValue(rawOptions);
    const words = promptStart === undefined ? prompt : `${promptStart} ${prompt}`.trim();
    const text = await promptWithInput(words, io);
    if (text.trim() === '') {
      // A module `--sim` took that cannot load says so before the prompt is missed: the
      // word may have been meant as the prompt.
      if (typeof options['sim'] === 'string') await checkSimModule(options['sim'], io);
      throw emptyPrompt(io.stdin.isTTY === true);
    }
    const { runCommand } = await import('./commands/run.js');
    done(await runCommand({ prompt: text, flags: await parseRunFlags(options), io }));
  };

  addRunOptions(
    program.option(
      '-p, --print [prompt]',
      'run one prompt and exit (same as `delegate run`); reads stdin when the prompt is left out',
    ),
  )
    .addHelpText(
      'after',
      examples([
        'delegate demo                                    # offline: forks, a background agent and Plan',
        'delegate                                         # interactive session in a terminal',
        'delegate -p "Where is the config loaded?"',
        'delegate run --sim "hi" --output-format json',
        'delegate agents list',
      ]),
    )
    .action(async (options: Record<string, unknown>, command: Command) => {
      const { print, ...rest } = options;
      if (command.args.length > 0) throw strayWords(command.args, print);
      if (typeof print === 'string') return run(print, rest);
      if (print === true && io.stdin.isTTY === true) {
        throw new UsageError(
          '-p needs a prompt: delegate -p "<prompt>", or pipe it in (echo "…" | delegate -p).',
        );
      }
      if (print === true || io.stdin.isTTY !== true) return run('', rest);
      const { interactiveCommand } = await import('./commands/interactive.js');
      done(await interactiveCommand({ flags: await parseRunFlags(rest), io }));
    });

  addRunOptions(
    program
      .command('run')
      .argument(
        '[prompt...]',
        'what the main agent should do (left out: read from stdin when it is not a terminal)',
      )
      .option(
        '-p, --print [prompt]',
        'accepted as in `claude -p`: the prompt (stdin when left out and none is given)',
      ),
  )
    .description(
      'run a main agent on a prompt (with the Agent tool, the built-in tools and the task tools) and exit',
    )
    .addHelpText(
      'after',
      examples([
        'delegate run "Review the changes on this branch"',
        'delegate run --permission-mode acceptEdits --allowed-tools "Bash(npm test:*)" "Fix the failing test"',
        'delegate run --agent code-reviewer "Review src/"',
        'delegate run --sim ./policy.mjs --output-format stream-json "hi"',
      ]),
    )
    .action(async (words: string[], options: Record<string, unknown>) => {
      const { print, ...rest } = options;
      const prompt = [typeof print === 'string' ? print : '', ...words].join(' ').trim();
      return run(prompt, rest);
    });
}

/** `delegate demo`. */
function registerDemoCommand(program: Command, { io, done }: CommandContext): void {
  program
    .command('demo')
    .description(
      'run an offline demo on the bundled simulator: forks, a background agent, Plan, and the cache they share',
    )
    .option('--json', 'print the result as JSON instead of tables')
    .option('--keep', 'keep the temporary copy of the sample project')
    .option('--no-compare', 'skip the comparison run with fresh sub-agents')
    .option('--fast', 'no simulated model latency')
    .addHelpText('after', examples(['delegate demo', 'delegate demo --json --fast']))
    .action(
      async (options: { json?: boolean; keep?: boolean; compare: boolean; fast?: boolean }) => {
        const { demoCommand } = await import('./commands/demo.js');
        done(
          await demoCommand({
            io,
            json: options.json === true,
            keep: options.keep === true,
            compare: options.compare,
            fast: options.fast === true,
          }),
        );
      },
    );
}

/** Refuses an empty `--agents` as `delegate run` does (same check, same message). */
async function checkAgentsFlag(agents: string | undefined): Promise<void> {
  if (agents !== undefined) await parseRunFlags({ agents });
}

/** `delegate agents list | show | validate`. */
function registerAgentsCommands(program: Command, { io, done }: CommandContext): void {
  const agents = program
    .command('agents')
    .description('the agents a run can use, and problems in agent files')
    .addHelpText(
      'after',
      examples([
        'delegate agents list',
        'delegate agents show Explore',
        'delegate agents validate',
      ]),
    );
  agents
    .command('list')
    .description(
      'the effective agents with source, overrides, model and tools (foreground and background)',
    )
    .option('--cwd <dir>', 'project directory (default: the current one)')
    .option(
      '--agents <json|file>',
      'include flag-source definitions, as `delegate run --agents` takes',
    )
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['delegate agents list', 'delegate agents list --json']))
    .action(async (options: { cwd?: string; agents?: string; json?: boolean }) => {
      await checkAgentsFlag(options.agents);
      const { agentsListCommand } = await import('./commands/agents.js');
      done(await agentsListCommand({ io, ...options }));
    });
  agents
    .command('show')
    .argument('<name>', 'agent type')
    .description('the resolved definition and system prompt of one agent')
    .option('--cwd <dir>', 'project directory (default: the current one)')
    .option('--agents <json|file>', 'include flag-source definitions')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples(['delegate agents show Explore', 'delegate agents show code-reviewer --json']),
    )
    .action(async (name: string, options: { cwd?: string; agents?: string; json?: boolean }) => {
      await checkAgentsFlag(options.agents);
      const { agentsShowCommand } = await import('./commands/agents.js');
      done(await agentsShowCommand({ io, name, ...options }));
    });
  agents
    .command('validate')
    .argument('[paths...]', 'agent files or folders (default: every agent source of the project)')
    .description(
      'print every diagnostic as path:line: severity: message; exit 1 when a file has an error',
    )
    .option('--cwd <dir>', 'project directory (default: the current one)')
    .option(
      '--agents <json|file>',
      'also check flag-source definitions, as `delegate run --agents` reads them',
    )
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples([
        'delegate agents validate',
        'delegate agents validate .claude/agents/reviewer.md',
        `delegate agents validate --agents '{"reviewer": {"description": "…", "prompt": "…"}}'`,
      ]),
    )
    .action(async (paths: string[], options: { cwd?: string; agents?: string; json?: boolean }) => {
      await checkAgentsFlag(options.agents);
      const { agentsValidateCommand } = await import('./commands/agents.js');
      done(await agentsValidateCommand({ io, paths, ...options }));
    });
}

/** `delegate transcripts list | show`. */
function registerTranscriptsCommands(program: Command, { io, done }: CommandContext): void {
  const transcripts = program
    .command('transcripts')
    .description('recorded sessions')
    .addHelpText(
      'after',
      examples(['delegate transcripts list', 'delegate transcripts show <session-id>']),
    );
  transcripts
    .command('list')
    .description('sessions in the transcript folder, newest first')
    .option('--transcript-dir <dir>', 'transcript folder (default ~/.delegate/transcripts)')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['delegate transcripts list']))
    .action(async (options: { transcriptDir?: string; json?: boolean }) => {
      const { transcriptsListCommand } = await import('./commands/transcripts.js');
      done(await transcriptsListCommand({ io, ...options }));
    });
  transcripts
    .command('show')
    .argument('<session>', 'session id, or its start when only one session has that start')
    .description("a session's conversation, or one sub-agent's with --agent")
    .option('--agent <id>', 'a sub-agent of the session')
    .option('--transcript-dir <dir>', 'transcript folder (default ~/.delegate/transcripts)')
    .option('--json', 'print the JSONL entries as a JSON array')
    .addHelpText(
      'after',
      examples([
        'delegate transcripts show 3f2a9c1e-4b7d-4e2a-9f10-5c6d7e8f9a0b',
        'delegate transcripts show 3f2a --agent a1b2c3d4e5f60718   # the one session whose id starts with 3f2a',
      ]),
    )
    .action(
      async (
        sessionId: string,
        options: { agent?: string; transcriptDir?: string; json?: boolean },
      ) => {
        const { transcriptsShowCommand } = await import('./commands/transcripts.js');
        done(await transcriptsShowCommand({ io, sessionId, ...options }));
      },
    );
}

/** `delegate memory list | show | clear`. */
function registerMemoryCommands(program: Command, { io, done }: CommandContext): void {
  const memory = program
    .command('memory')
    .description("agents' persistent memory (user, project and local scopes)")
    .addHelpText(
      'after',
      examples(['delegate memory list', 'delegate memory show code-reviewer --scope project']),
    );
  const scopeOption = (): Option =>
    new Option('--scope <scope>', 'memory scope').choices(['user', 'project', 'local']);
  memory
    .command('list')
    .description('agents with memory, per scope')
    .addOption(scopeOption())
    .option('--cwd <dir>', 'project directory (default: the current one)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples(['delegate memory list', 'delegate memory list --scope project']),
    )
    .action(
      async (options: { scope?: 'user' | 'project' | 'local'; cwd?: string; json?: boolean }) => {
        const { memoryListCommand } = await import('./commands/memory.js');
        done(await memoryListCommand({ io, ...options }));
      },
    );
  memory
    .command('show')
    .argument('<agent>', 'agent type')
    .description("an agent's MEMORY.md and topic files")
    .addOption(scopeOption())
    .option('--cwd <dir>', 'project directory (default: the current one)')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['delegate memory show code-reviewer --scope project']))
    .action(
      async (
        agent: string,
        options: { scope?: 'user' | 'project' | 'local'; cwd?: string; json?: boolean },
      ) => {
        const { memoryShowCommand } = await import('./commands/memory.js');
        done(await memoryShowCommand({ io, agent, ...options }));
      },
    );
  memory
    .command('clear')
    .argument('<agent>', 'agent type')
    .description("delete an agent's memory folder (one scope, or every scope)")
    .addOption(scopeOption())
    .option('--cwd <dir>', 'project directory (default: the current one)')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['delegate memory clear code-reviewer --scope local']))
    .action(
      async (
        agent: string,
        options: { scope?: 'user' | 'project' | 'local'; cwd?: string; json?: boolean },
      ) => {
        const { memoryClearCommand } = await import('./commands/memory.js');
        done(await memoryClearCommand({ io, agent, ...options }));
      },
    );
}

/** `delegate sim` and `delegate config`. */
function registerServiceCommands(program: Command, { io, done }: CommandContext): void {
  program
    .command('sim')
    .description(
      'run the bundled Messages API simulator as a server (prints its URL on the first line)',
    )
    .option('--port <port>', 'port (0: any free one)', port, 0)
    .option('--host <host>', 'address to listen on', host, '127.0.0.1')
    .option(
      '--policy <module>',
      'a module whose default export is a policy (default: answer with the prompt)',
    )
    .option('--json', 'print {"url": …} instead of the bare URL')
    .addHelpText(
      'after',
      examples([
        'delegate sim --port 8787',
        'ANTHROPIC_BASE_URL=http://127.0.0.1:8787 ANTHROPIC_API_KEY=sim delegate run "hi"',
      ]),
    )
    .action(async (options: { port: number; host: string; policy?: string; json?: boolean }) => {
      const { simCommand } = await import('./commands/sim.js');
      done(await simCommand({ io, ...options }));
    });

  addSettingOptions(program.command('config'))
    .description(
      'the effective settings and where each came from (files, environment, flags); takes the flags of `delegate run` that settings files can set',
    )
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `\nSettings files (JSON; later ones win, permission lists add up):\n  ~/.delegate/settings.json                user\n  <project>/.delegate/settings.json        project (commit it)\n  <project>/.delegate/settings.local.json  local (keep it out of git)\nFields: model, subagentModel, permissionMode, permissions.{allow,deny,ask,additionalDirectories},\n        fork, maxTurns, transcriptDir, mcpConfig, prices, trustedProjects (user file only).\n${examples(['delegate config', 'delegate config --json', 'delegate config --model opus --disallowed-tools "Bash(rm:*)"'])}`,
    )
    .action(async (options: Record<string, unknown>) => {
      const { json, ...flags } = options;
      const { configCommand } = await import('./commands/config.js');
      done(await configCommand({ io, flags: await parseRunFlags(flags), json: json === true }));
    });
}

/** Prints the help of the command `words` name under `program`; a word that names none is a usage error. */
function showHelp(program: Command, words: readonly string[], { done }: CommandContext): void {
  let target = program;
  for (const [index, word] of words.entries()) {
    const next = target.commands.find((command) => command.name() === word);
    if (next === undefined) {
      const parent = ['delegate', ...words.slice(0, index)].join(' ');
      const names = target.commands
        .map((command) => command.name())
        .filter((name) => name !== 'help')
        .join(', ');
      throw new UsageError(
        `there is no command '${parent} ${word}'. The commands of '${parent}' are ${names}.`,
      );
    }
    target = next;
  }
  target.outputHelp();
  done(EXIT_CODES.success);
}

/**
 * `delegate help [command…]`: the help of a command, as `delegate <command…> --help` prints it;
 * and `delegate agents help [command]` (and of the other groups), which says so when it names
 * no command instead of printing the group's help.
 */
function registerHelpCommand(program: Command, context: CommandContext): void {
  for (const group of program.commands) {
    if (group.commands.length === 0) continue;
    group
      .helpCommand(false)
      .command('help')
      .argument('[command...]', `a command of delegate ${group.name()}`)
      .description('show the help of a command')
      .action((words: string[]) => showHelp(program, [group.name(), ...words], context));
  }
  program
    .command('help')
    .argument('[command...]', 'a command, such as run or agents show')
    .description('show the help of a command')
    .addHelpText('after', examples(['delegate help run', 'delegate help agents show']))
    .action((words: string[]) => showHelp(program, words, context));
}

/**
 * After commander's own error (a bad option value, a missing argument), says where the
 * command's usage is. Words that name no command get their own message (`strayWords`).
 */
function addUsageHints(command: Command, path: string): void {
  command.showHelpAfterError(`(${path} --help shows how to use it)`);
  for (const subcommand of command.commands)
    addUsageHints(subcommand, `${path} ${subcommand.name()}`);
}

/**
 * A flag that takes one value and is given twice (`-p hi -p there`, `--agents A --agents B`)
 * is a usage error naming it: commander would keep the last value and drop the others
 * without a word. Flags that collect their values (`--allowed-tools`, `--add-dir`, …) repeat.
 */
function refuseRepeatedValues(command: Command): void {
  for (const option of command.options) {
    if (!(option.required || option.optional) || option.parseArg === collect) continue;
    const name = option.short ? `${option.short}/${option.long}` : (option.long ?? option.flags);
    let seen = false;
    command.on(`option:${option.name()}`, () => {
      if (seen) {
        throw new UsageError(
          `${name} was given more than once, but it takes one value: give it once.${option.long === '--agents' ? ' Put every agent definition in one JSON object.' : ''}`,
        );
      }
      seen = true;
    });
  }
  for (const subcommand of command.commands) refuseRepeatedValues(subcommand);
}

/** Builds the `delegate` command tree; each action records its exit code in `result`. */
export function createProgram(io: CliIo, result: { exitCode: ExitCode }): Command {
  const program = new Command('delegate');
  const context: CommandContext = {
    io,
    done: (code) => {
      result.exitCode = code;
    },
  };
  program
    .description(
      'Delegate: a main agent that hands work to sub-agents (foreground, background, forks).',
    )
    .version(CLI_VERSION, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .configureOutput({
      writeOut: (text) => void io.stdout.write(text),
      // Commander's errors quote the arguments: no escape sequence in one may act.
      writeErr: (text) => void io.stderr.write(printableLines(text)),
    })
    .exitOverride()
    // Options after a subcommand belong to it, even when the root has an option of that name.
    .enablePositionalOptions()
    .hook('preAction', (_program, action) => {
      enterCwdFlagIfCurrentGone(action.opts()['cwd']);
      // Every command but help needs a current directory that exists (`demo` and `sim` too,
      // as the README says); reading it is the usage error saying it is gone.
      if (action.name() !== 'help') void io.cwd;
    });

  for (const register of [
    registerRunCommands,
    registerDemoCommand,
    registerAgentsCommands,
    registerTranscriptsCommands,
    registerMemoryCommands,
    registerServiceCommands,
    registerHelpCommand,
  ]) {
    register(program, context);
  }
  addUsageHints(program, 'delegate');
  refuseRepeatedValues(program);
  // Words after `delegate` that name no command reach the root's action, which explains them
  // (set after the subcommands exist, so they keep refusing extra arguments).
  program.allowExcessArguments(true);
  return program;
}

/** Runs `delegate` with `argv` (without the node and script paths) and returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const result: { exitCode: ExitCode } = { exitCode: EXIT_CODES.success };
  const program = createProgram(io, result);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return result.exitCode;
  } catch (error) {
    return reportError(error, io);
  }
}

function reportError(error: unknown, io: CliIo): ExitCode {
  const commander = error as { code?: string; exitCode?: number };
  if (typeof commander.code === 'string' && commander.code.startsWith('commander.')) {
    // Commander has printed its own message; help and version are not errors.
    // Help asked for (and the version) is success; help shown for a missing subcommand is not.
    if (commander.code === 'commander.helpDisplayed' || commander.code === 'commander.version') {
      return EXIT_CODES.success;
    }
    if (commander.code === 'commander.help' && commander.exitCode === 0) return EXIT_CODES.success;
    return EXIT_CODES.usage;
  }
  // Messages quote settings files, agent files, transcripts and what servers answered: their
  // control characters show as `?`, so no escape sequence in them acts on the terminal.
  if (error instanceof UsageError) {
    io.stderr.write(`delegate: ${printableLines(error.message)}\n`);
    return EXIT_CODES.usage;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr.write(`delegate: ${printableLines(message)}\n`);
  return EXIT_CODES.runFailed;
}
