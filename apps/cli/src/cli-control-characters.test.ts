import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Scratch, makeScratch, policy, runCli } from './__fixtures__/run-cli.js';

let scratch: Scratch;
beforeEach(async () => {
  scratch = await makeScratch();
  await mkdir(join(scratch.project, '.git'));
  await mkdir(join(scratch.project, '.delegate'));
});
afterEach(async () => {
  await scratch.cleanup();
});

const run = (args: string[], input = '') =>
  runCli(args, { cwd: scratch.project, home: scratch.home, input });

/** Writes the project's `.delegate/settings.json`. */
const projectSettings = (text: string) =>
  writeFile(join(scratch.project, '.delegate', 'settings.json'), text);

// An OSC that sets the terminal's title, and a CSI that clears the screen.
const TITLE = '\u001b]0;PWNED\u0007';
const CLEAR = '\u001b[2J';
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('control characters in what error messages quote', () => {
  it('shows them as ? in settings errors, on every command, before any trust check', async () => {
    await projectSettings(`x${TITLE}`);
    for (const args of [['agents', 'list'], ['config'], ['run', '--sim', 'hi']]) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain('"x?]0;PWNED?" is not valid JSON');
      expect(result.stderr, args.join(' ')).not.toMatch(CONTROL);
    }
    await projectSettings(JSON.stringify({ [TITLE]: 1 }));
    const field = await run(['config']);
    expect(field.code).toBe(2);
    expect(field.stderr).toContain('unknown field "?]0;PWNED?"');
    expect(field.stderr).not.toMatch(CONTROL);
    await projectSettings(JSON.stringify({ permissions: { deny: [`Bash(${CLEAR}`] } }));
    const rule = await run(['run', '--sim', 'hi']);
    expect(rule.code).toBe(2);
    expect(rule.stderr).toContain('"Bash(?[2J" is not a permission rule');
    expect(rule.stderr).not.toMatch(CONTROL);
  });

  it('shows them as ? in --mcp-config, --agents and transcript errors, and in commander errors', async () => {
    const mcp = join(scratch.root, 'mcp.json');
    await writeFile(mcp, `x${TITLE}`);
    const badMcp = await run(['run', '--sim', '--mcp-config', mcp, 'hi']);
    expect(badMcp.code).toBe(2);
    expect(badMcp.stderr).toContain('"x?]0;PWNED?" is not valid JSON');
    const agents = join(scratch.root, 'agents.json');
    await writeFile(agents, `x${TITLE}`);
    const badAgents = await run(['run', '--sim', '--agents', agents, 'hi']);
    expect(badAgents.code).toBe(2);
    expect(badAgents.stderr).toContain('"x?]0;PWNED?" is not valid JSON');
    const transcripts = join(scratch.root, 'transcripts');
    await mkdir(transcripts);
    await writeFile(join(transcripts, 'e1.jsonl'), `x${TITLE}${CLEAR}\n{}\n`);
    const show = await run(['transcripts', 'show', 'e1', '--transcript-dir', transcripts]);
    expect(show.code).toBe(2);
    expect(show.stderr).toContain('"x?]0;PWNED??[2J" is not valid JSON');
    const unknown = await run([`--bo${CLEAR}gus`]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown option '--bo?[2Jgus'");
    for (const result of [badMcp, badAgents, show, unknown])
      expect(result.stderr).not.toMatch(CONTROL);
  });
});

describe('control characters in the plain stderr lines of a text run', () => {
  it('shows them as ? in the model names and the cwd of the session header and agent.started lines', async () => {
    await projectSettings(JSON.stringify({ model: `m${TITLE}`, subagentModel: `s${CLEAR}` }));
    const cwd = join(scratch.project, `dir${TITLE}`);
    await mkdir(cwd);
    const result = await runCli(['run', '--sim', policy('spawn-general'), 'hi'], {
      cwd,
      home: scratch.home,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^session \S+ · m\?\]0;PWNED\? · \S*dir\?\]0;PWNED\? · /m);
    expect(result.stderr).toMatch(/ started general-purpose "say hi" \(foreground, s\?\[2J\)/);
    expect(result.stderr).not.toMatch(CONTROL);
  });
});
