import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Scratch, makeScratch, policy, runCli } from './__fixtures__/run-cli.js';

// The stdio MCP server of the tools package's tests: `echo`, `add`, `fail`, `greet.user`.
const SERVER = fileURLToPath(
  new URL('../../../packages/tools/src/__fixtures__/mcp-test-server.mjs', import.meta.url),
);

let scratch: Scratch;
let mcpConfig: string;
beforeEach(async () => {
  scratch = await makeScratch();
  mcpConfig = join(scratch.root, 'mcp.json');
  const server = { command: process.execPath, args: [SERVER] };
  await writeFile(
    mcpConfig,
    JSON.stringify({ mcpServers: { calc: server, other: server, 'acme.tools': server } }),
  );
});
afterEach(async () => {
  await scratch.cleanup();
});

/** `delegate run` with the MCP servers `calc`, `other` and `acme.tools`, making the call `prompt` names. */
const runCall = (flags: string[], prompt: string) =>
  runCli(
    [
      'run',
      '--sim',
      policy('tool-from-prompt'),
      '--mcp-config',
      mcpConfig,
      '--transcript-dir',
      join(scratch.root, 'transcripts'),
      ...flags,
      prompt,
    ],
    { cwd: scratch.project, home: scratch.home },
  );

const ADD = `mcp__calc__add ${JSON.stringify({ a: 2, b: 40 })}`;
const OTHER_ADD = `mcp__other__add ${JSON.stringify({ a: 1, b: 1 })}`;

/** Writes a user agent file (user scope: trusted) with these frontmatter lines. */
async function userAgent(name: string, lines: string[]): Promise<void> {
  const agents = join(scratch.home, '.claude', 'agents');
  await mkdir(agents, { recursive: true });
  await writeFile(
    join(agents, `${name}.md`),
    ['---', `name: ${name}`, 'description: a main thread', ...lines, '---', 'You work.'].join('\n'),
  );
}

/** The `tools` of a stream-json run's `system`/`init` line. */
function initTools(stdout: string): string[] {
  const init = stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { type: string; subtype?: string; tools?: string[] })
    .find((line) => line.type === 'system' && line.subtype === 'init');
  return init?.tools ?? [];
}

describe('permission rules naming a whole MCP server', () => {
  it.each(['mcp__calc', 'mcp__calc__*'])(
    '--disallowed-tools %s refuses every tool of the server, even in bypassPermissions',
    async (rule) => {
      const denied = await runCall(
        ['--permission-mode', 'bypassPermissions', '--disallowed-tools', rule],
        ADD,
      );
      expect(denied.code, denied.stderr).toBe(0);
      expect(denied.stdout).toContain(
        `ERROR: Permission denied: mcp__calc__add is denied by the rule ${rule} from cliArg.`,
      );
      const other = await runCall(
        ['--permission-mode', 'bypassPermissions', '--disallowed-tools', rule],
        OTHER_ADD,
      );
      expect(other.stdout).toMatch(/^OK: 2/);
    },
  );

  it('a settings deny rule and an --allowed-tools rule name the server too', async () => {
    await mkdir(join(scratch.project, '.delegate'), { recursive: true });
    await writeFile(
      join(scratch.project, '.delegate', 'settings.json'),
      JSON.stringify({ permissions: { deny: ['mcp__calc'] } }),
    );
    const denied = await runCall(['--permission-mode', 'bypassPermissions'], ADD);
    expect(denied.stdout).toContain('is denied by the rule mcp__calc from projectSettings.');
    // In default mode `add` needs approval, which the allow rule gives for the whole server.
    const allowed = await runCall(['--allowed-tools', 'mcp__other'], OTHER_ADD);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toMatch(/^OK: 2/);
  });

  it('refuses a rule no tool name can match, saying why', async () => {
    const refused = await runCall(['--disallowed-tools', 'mcp__*'], ADD);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      '--disallowed-tools: "mcp__*" is not a permission rule: "mcp__*" has a wildcard, which matches no tool name',
    );
    expect(refused.stderr).toContain('"mcp__<server>__*"');
  });
});

describe('--agent with tools and disallowedTools', () => {
  it("applies the file's lists to the MCP tools of the main thread", async () => {
    await userAgent('limited', ['tools: Read', 'disallowedTools: mcp__calc']);
    const limited = await runCall(
      [
        '--agent',
        'limited',
        '--permission-mode',
        'bypassPermissions',
        '--output-format',
        'stream-json',
      ],
      ADD,
    );
    expect(limited.code, limited.stderr).toBe(0);
    expect(initTools(limited.stdout)).toEqual([
      'Read',
      'Agent',
      'TaskOutput',
      'TaskStop',
      'SendMessage',
    ]);
    expect(limited.stdout).not.toContain('OK: 42');
    await userAgent('no-calc', ['disallowedTools: mcp__calc']);
    const noCalc = await runCall(
      [
        '--agent',
        'no-calc',
        '--permission-mode',
        'bypassPermissions',
        '--output-format',
        'stream-json',
      ],
      OTHER_ADD,
    );
    const tools = initTools(noCalc.stdout);
    expect(tools).toEqual(expect.arrayContaining(['Read', 'Bash', 'mcp__other__add']));
    expect(tools.filter((name) => name.startsWith('mcp__calc__'))).toEqual([]);
    expect(noCalc.stdout).toContain('OK: 2');
  });
});

describe('--agent with requiredMcpServers', () => {
  it('finds a server by its configured name, dots and all', async () => {
    await userAgent('needs-acme', ['requiredMcpServers: [acme.tools]']);
    const result = await runCall(
      ['--agent', 'needs-acme', '--permission-mode', 'bypassPermissions'],
      `mcp__acme_tools__echo ${JSON.stringify({ text: 'reached' })}`,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^OK: reached/);
  });
});
