import picocolors from 'picocolors';
import { describe, expect, it } from 'vitest';
import { AgentTree } from '../usage/agent-tree.js';
import { TextRenderer } from './text-renderer.js';

// The writer's cursor moves, erases, colors and synchronized-output marks.
// eslint-disable-next-line no-control-regex
const OWN_SEQUENCES = /\u001b\[[0-9;?]*[A-Za-z]/g;
// Any other control character (newlines aside), or a bidirectional override.
// eslint-disable-next-line no-control-regex
const FOREIGN_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/;

describe('TextRenderer in a terminal', () => {
  it('prints the notes above the tree with the control characters of a model or a tool as ?', async () => {
    const writes: string[] = [];
    const stderr = {
      isTTY: true,
      columns: 120,
      rows: 30,
      write: (chunk: string) => {
        writes.push(chunk);
        return true;
      },
    } as unknown as NodeJS.WriteStream;
    const tree = new AgentTree({ mainModel: 'claude-sonnet-4-5' });
    const renderer = new TextRenderer({
      stdout: () => undefined,
      stderr,
      tree,
      colors: picocolors.createColors(false),
      live: true,
    });
    await renderer.open();
    const started = {
      type: 'agent.started',
      agentId: 'a1',
      timestamp: '',
      agentType: 'general-purpose',
      description: 'job \u001b]0;pwned\u0007 \u202eevil',
      mode: 'background',
      model: 'm',
    } as const;
    tree.handleEvent(started);
    renderer.onAgentEvent(started);
    const warning = {
      type: 'agent.warning',
      agentId: 'a1',
      timestamp: '',
      code: 'TEST',
      message: 'bad \u001b[2J\u001b]8;;http://x\u0007 link',
    } as const;
    renderer.onAgentEvent(warning);
    const notification = {
      type: 'agent.notification',
      agentId: 'a1',
      timestamp: '',
      taskId: 't1',
      status: 'completed',
      text: '<task-notification>…</task-notification>',
    } as const;
    renderer.onAgentEvent(notification);
    renderer.liveView?.stop();
    const screen = writes.join('');
    expect(screen).toContain('warning (a1): bad ?[2J?]8;;http://x? link');
    expect(screen).toContain('"job ?]0;pwned? ?evil" (completed) queued for');
    // Only the writer's own sequences remain: cursor moves, erases, colors, sync marks.
    const foreign = screen.replace(OWN_SEQUENCES, '').replaceAll('\r', '');
    expect(foreign).not.toMatch(FOREIGN_CONTROL);
  });
});

describe('TextRenderer, the answer on stdout', () => {
  const ANSWER =
    'line one\n\tindented \u001b]52;c;cHduZWQ=\u0007 \u001b[2J\u001b[H fake prompt \u202eevil\nlast';

  async function printed(stdoutIsTerminal: boolean): Promise<string> {
    const out: string[] = [];
    const tree = new AgentTree({ mainModel: 'claude-sonnet-4-5' });
    const renderer = new TextRenderer({
      stdout: (text) => void out.push(text),
      stderr: { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream,
      tree,
      colors: picocolors.createColors(false),
      live: false,
      stdoutIsTerminal,
    });
    await renderer.finish({
      sessionId: 's',
      text: ANSWER,
      exitReason: 'completed',
      durationMs: 1,
      durationApiMs: 1,
      numTurns: 1,
      tree,
    });
    return out.join('');
  }

  it('shows the control characters of a model answer as ? on a terminal, keeping its lines', async () => {
    // A clipboard write, a screen clear and a cursor move would otherwise act on the terminal.
    expect(await printed(true)).toBe(
      'line one\n\tindented ?]52;c;cHduZWQ=? ?[2J?[H fake prompt ?evil\nlast\n',
    );
  });

  it('passes the answer byte for byte into a pipe or a file', async () => {
    expect(await printed(false)).toBe(`${ANSWER}\n`);
  });

  it('shows the control characters of an error (which can quote a server) as ?', async () => {
    const errors: string[] = [];
    const tree = new AgentTree({ mainModel: 'claude-sonnet-4-5' });
    const renderer = new TextRenderer({
      stdout: () => undefined,
      stderr: {
        isTTY: false,
        write: (chunk: string) => void errors.push(chunk),
      } as unknown as NodeJS.WriteStream,
      tree,
      colors: picocolors.createColors(false),
      live: false,
    });
    await renderer.finish({
      sessionId: 's',
      text: '',
      exitReason: 'error',
      error: 'API error 500: \u001b]0;pwned\u0007 \u001b[2J',
      durationMs: 1,
      durationApiMs: 1,
      numTurns: 1,
      tree,
    });
    expect(errors.join('')).toContain('API error 500: ?]0;pwned? ?[2J');
  });
});
