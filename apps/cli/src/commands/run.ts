import { visibleAgents } from '@delegate/runtime/internal';
import type { CliIo } from '../cli-io.js';
import type { ExitCode } from '../exit-codes.js';
import { JsonRenderer } from '../output/json-renderer.js';
import { reportLoadDiagnostics } from '../output/report-diagnostics.js';
import type { RunRenderer } from '../output/run-renderer.js';
import { describeEnd } from '../output/run-summary.js';
import { StreamJsonRenderer } from '../output/stream-json-renderer.js';
import { TextRenderer } from '../output/text-renderer.js';
import {
  type CliSession,
  type CliSessionOptions,
  createCliSession,
} from '../session/create-cli-session.js';
import { type EffectiveConfig, resolveConfig } from '../settings/resolve-config.js';
import { colorsFor } from '../terminal/colors.js';
import { printableLines } from '../terminal/format.js';
import { AgentTree } from '../usage/agent-tree.js';
import { executeRun, exitCodeFor } from './execute-run.js';
import { listenDuringSetup, setupStoppedMessage } from './setup-interrupts.js';
import { type OutputFormat, type RunFlags, configFlags } from './run-flags.js';

/** Whether a `text` run draws the live agent tree: stderr is a terminal that can draw it. */
export function drawsLiveTree(io: CliIo): boolean {
  return io.stderr.isTTY === true && io.env['TERM'] !== 'dumb';
}

/** A renderer for an output format; `text` draws the live tree when stderr is a terminal. */
export async function createRenderer(options: {
  format: OutputFormat;
  io: CliIo;
  tree: AgentTree;
  /** Warning codes the `text` format does not print (the command reports them itself). */
  omitWarnings?: readonly string[];
}): Promise<RunRenderer & { liveView?: TextRenderer['liveView'] }> {
  const { io, tree } = options;
  const write = (text: string): void => void io.stdout.write(text);
  switch (options.format) {
    case 'json':
      return new JsonRenderer(write);
    case 'stream-json':
      return new StreamJsonRenderer(write, tree);
    case 'text': {
      const renderer = new TextRenderer({
        stdout: write,
        stderr: io.stderr,
        tree,
        colors: colorsFor(io.stderr, io.env),
        live: drawsLiveTree(io),
        stdoutIsTerminal: io.stdout.isTTY === true,
        omitWarnings: options.omitWarnings,
      });
      await renderer.open();
      return renderer;
    }
  }
}

/** The agent types the main agent may start (deny rules and MCP requirements applied). */
export function agentTypesOf(cli: CliSession): string[] {
  const { context } = cli.session;
  const definitions = context.options.agentDefinitions;
  return definitions ? visibleAgents(context, definitions).map((agent) => agent.agentType) : [];
}

/** What a renderer's `start` is told about a CLI session. */
export function describeSession(cli: CliSession): Parameters<RunRenderer['start']>[0] {
  const { session } = cli;
  return {
    sessionId: cli.sessionId,
    model: session.context.options.model,
    cwd: session.context.cwd,
    tools: session.context.options.tools.map((tool) => tool.name),
    agents: agentTypesOf(cli),
    permissionMode: session.context.getAppState().toolPermissionContext.mode,
    mcpServers: cli.mcpServers(),
    apiKeySource: cli.apiKeySource,
  };
}

/** Tells the person which settings of an untrusted project were not applied, and how to trust it. */
export function reportIgnoredSettings(config: EffectiveConfig, warn: (line: string) => void): void {
  if (config.ignored.length === 0) return;
  for (const entry of config.ignored) {
    warn(`delegate: ignored ${entry.field} in ${entry.where}: ${entry.reason}.`);
  }
  warn(
    `delegate: ${config.projectRoot} is not a trusted project, so its settings files cannot loosen permissions. Add it to "trustedProjects" in ~/.delegate/settings.json, or pass --trust-project.`,
  );
}

/** The session options the run flags ask for; problems loading agents and MCP servers go to stderr. */
export function sessionOptionsFor(options: {
  flags: RunFlags;
  config: EffectiveConfig;
  io: CliIo;
}): CliSessionOptions {
  const { flags, config, io } = options;
  // Warnings quote settings files, agent files and MCP servers: no escape sequence may act.
  const warn = (line: string): void => void io.stderr.write(`${printableLines(line)}\n`);
  reportIgnoredSettings(config, warn);
  return {
    config,
    processCwd: io.cwd,
    ...(flags.agent ? { agent: flags.agent } : {}),
    ...(flags.agents ? { agents: flags.agents } : {}),
    ...(flags.resume ? { resume: flags.resume } : {}),
    ...(flags.sim !== undefined ? { sim: flags.sim } : {}),
    onDiagnostics: (diagnostics) => reportLoadDiagnostics(diagnostics, warn),
    onWarning: (message) => warn(`delegate: ${message}`),
  };
}

/**
 * Tells the person when transcript lines could not be written (a transcript failure never
 * stops the run): a later `--resume` of the session would lack them.
 */
function reportTranscriptErrors(cli: CliSession, io: CliIo): void {
  const errors = cli.session.transcript?.writeErrors ?? [];
  if (errors.length === 0 || io.outputClosed?.aborted) return;
  // Each entry is one failed write; a file that cannot be written fails once per message.
  const more = errors.length > 1 ? `; ${errors.length} writes failed in all` : '';
  io.stderr.write(
    `delegate: the transcript could not be written (${printableLines(errors[0] ?? '')}${more}), so \`--resume ${cli.sessionId}\` would miss what was not written. Check --transcript-dir (or transcriptDir in settings).\n`,
  );
}

/** `delegate run`: a main agent on `prompt`, to the end, in the chosen output format. */
export async function runCommand(options: {
  prompt: string;
  flags: RunFlags;
  io: CliIo;
}): Promise<ExitCode> {
  const { flags, io } = options;
  const config = resolveConfig({ flags: configFlags(flags), env: io.env, processCwd: io.cwd });
  const setup = listenDuringSetup(io);
  let cli: CliSession;
  try {
    cli = await createCliSession({
      ...sessionOptionsFor({ flags, config, io }),
      signal: setup.signal,
    });
  } catch (error) {
    setup.stop();
    const stoppedBy = setup.reason();
    if (stoppedBy === undefined) throw error;
    io.stderr.write(setupStoppedMessage(setup));
    return exitCodeFor(stoppedBy);
  }
  const tree = new AgentTree({
    mainModel: cli.session.context.options.model,
    prices: config.prices.value,
  });
  // A transcript that cannot be written is reported once, at the end (reportTranscriptErrors),
  // in the CLI's words, rather than as each agent's TRANSCRIPT_WRITE_FAILED warning too.
  const renderer = await createRenderer({
    format: flags.outputFormat,
    io,
    tree,
    omitWarnings: ['TRANSCRIPT_WRITE_FAILED'],
  });
  renderer.start(describeSession(cli));
  // From here the run's own listener hears stop signals (executeRun installs it at once).
  setup.stop();
  const stoppedEarly = setup.reason();
  if (stoppedEarly !== undefined) {
    await cli.session.close();
    await cli.close();
    io.stderr.write(setupStoppedMessage(setup));
    return exitCodeFor(stoppedEarly);
  }
  const result = await executeRun({
    cli,
    prompt: options.prompt,
    maxTurns: config.maxTurns.value,
    maxTurnsFrom: config.maxTurns.where,
    renderer,
    tree,
    io,
    liveView: renderer.liveView,
  });
  await renderer.finish(result);
  if (result.error !== undefined && flags.outputFormat !== 'text' && !io.outputClosed?.aborted)
    io.stderr.write(`delegate: ${describeEnd(result)}\n`);
  reportTranscriptErrors(cli, io);
  return exitCodeFor(result.exitReason);
}
