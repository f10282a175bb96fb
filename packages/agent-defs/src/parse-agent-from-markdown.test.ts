import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ParseAgentResult } from './agent-diagnostic.js';
import { parseAgentFromMarkdown } from './parse-agent-from-markdown.js';
import { validateAgentName } from './validate-agent-name.js';

function parse(content: string, extra: { plugin?: string } = {}): ParseAgentResult {
  return parseAgentFromMarkdown({
    filePath: '/agents/test.md',
    baseDir: '/agents',
    content,
    source: 'projectSettings',
    ...extra,
  });
}

function agentOf(content: string) {
  const result = parse(content);
  if (!result.ok) throw new Error(`expected an agent, got: ${result.diagnostic.reason}`);
  return result;
}

function diagnosticOf(content: string) {
  const result = parse(content);
  if (result.ok) throw new Error(`expected a diagnostic, got agent ${result.agent.agentType}`);
  return result.diagnostic;
}

const header = (lines: string) =>
  `---\nname: helper\ndescription: Helps.\n${lines}\n---\n\nPrompt.\n`;

describe('parseAgentFromMarkdown', () => {
  it('turns frontmatter and body into a definition', () => {
    const { agent, warnings } = agentOf(
      '---\nname: reviewer\ndescription: Reviews code.\n---\n\n  You review code.\n\n',
    );
    expect(agent).toMatchObject({
      agentType: 'reviewer',
      whenToUse: 'Reviews code.',
      source: 'projectSettings',
      baseDir: '/agents',
      filePath: '/agents/test.md',
    });
    expect(agent.getSystemPrompt()).toBe('You review code.');
    expect(agent.tools).toBeUndefined();
    expect(warnings).toEqual([]);
  });

  it('turns the literal \\n of plain YAML descriptions into newlines', () => {
    const { agent } = agentOf(
      '---\nname: a\ndescription: First line.\\n\\n<example>\\nuser: hi\\n</example>\n---\nBody',
    );
    expect(agent.whenToUse).toBe('First line.\n\n<example>\nuser: hi\n</example>');
  });

  it('reads CRLF files and files with a byte-order mark like LF files', () => {
    const text =
      '---\nname: a\ndescription: |\n  Two\n  lines\ntools: Read, Grep\n---\n\nLine one.\nLine two.\n';
    const plain = agentOf(text).agent;
    for (const variant of [
      text.replace(/\n/g, '\r\n'),
      `\uFEFF${text}`,
      `\uFEFF${text.replace(/\n/g, '\r\n')}`,
    ]) {
      const { agent } = agentOf(variant);
      expect(agent.whenToUse).toBe(plain.whenToUse);
      expect(agent.tools).toEqual(['Read', 'Grep']);
      expect(agent.getSystemPrompt()).toBe('Line one.\nLine two.');
    }
  });

  it('reads tools as a YAML list, a comma string, a flow list, or "*"', () => {
    expect(agentOf(header('tools:\n  - Read\n  - Bash(git add, git commit)')).agent.tools).toEqual([
      'Read',
      'Bash(git add, git commit)',
    ]);
    expect(agentOf(header('tools: Read, Bash(git add, git commit)')).agent.tools).toEqual([
      'Read',
      'Bash(git add, git commit)',
    ]);
    expect(agentOf(header('tools: [Read, Grep, Read]')).agent.tools).toEqual(['Read', 'Grep']);
    expect(agentOf(header('tools: "*"')).agent.tools).toEqual(['*']);
    expect(agentOf(header('tools: []')).agent.tools).toEqual([]);
    expect(agentOf(header('tools: Agent(worker, researcher), Read')).agent.tools).toEqual([
      'Agent(worker, researcher)',
      'Read',
    ]);
  });

  it('is lenient with the case of enum values and with numbers written as text', () => {
    const { agent, warnings } = agentOf(
      header(
        'model: Sonnet\ncolor: Blue\npermissionMode: AcceptEdits\nmemory: Project\nmaxTurns: "25"\neffort: HIGH\nbackground: "yes"\nisolation: Worktree',
      ),
    );
    expect(agent).toMatchObject({
      model: 'sonnet',
      color: 'blue',
      permissionMode: 'acceptEdits',
      memory: 'project',
      maxTurns: 25,
      effort: 'high',
      background: true,
      isolation: 'worktree',
    });
    expect(warnings).toEqual([]);
  });

  it('keeps full model ids as written', () => {
    expect(agentOf(header('model: claude-sonnet-4-5-20250929')).agent.model).toBe(
      'claude-sonnet-4-5-20250929',
    );
  });

  it('reads the remaining fields', () => {
    const { agent } = agentOf(
      header(
        'disallowedTools: Bash\nskills:\n  - pdf\n  - xlsx\nmcpServers:\n  - github\n  - local-db: { command: db-server }\nrequiredMcpServers: github\nhooks:\n  PreToolUse: []\ninitialPrompt: Start with the tests.\nomitClaudeMd: true',
      ),
    );
    expect(agent).toMatchObject({
      disallowedTools: ['Bash'],
      skills: ['pdf', 'xlsx'],
      mcpServers: ['github', { 'local-db': { command: 'db-server' } }],
      requiredMcpServers: ['github'],
      hooks: { PreToolUse: [] },
      initialPrompt: 'Start with the tests.',
      omitClaudeMd: true,
    });
  });

  it('adds Read, Write and Edit to an explicit tool list when the agent has memory', () => {
    expect(agentOf(header('memory: user\ntools: Grep, Edit')).agent.tools).toEqual([
      'Grep',
      'Edit',
      'Read',
      'Write',
    ]);
    expect(agentOf(header('memory: user')).agent.tools).toBeUndefined();
    expect(agentOf(header('memory: user\ntools: "*"')).agent.tools).toEqual(['*']);
    expect(agentOf(header('tools: Grep')).agent.tools).toEqual(['Grep']);
  });

  it('returns the body alone as the system prompt when the agent has memory (the runtime adds the memory prompt)', () => {
    expect(agentOf(header('memory: local')).agent.getSystemPrompt()).toBe('Prompt.');
  });

  it('drops a bad optional field with a warning on its line and keeps the agent', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['memory: everywhere', 'memory', /`memory` is the text "everywhere"/],
      ['color: magenta', 'color', /`color`/],
      ['maxTurns: -3', 'maxTurns', /`maxTurns` is number -3/],
      ['maxTurns: 2.5', 'maxTurns', /`maxTurns`/],
      ['effort: extreme', 'effort', /`effort`/],
      ['model: 4', 'model', /`model` is number 4/],
      ['background: sometimes', 'background', /`background`/],
      ['skills: { a: 1 }', 'skills', /`skills` is a mapping/],
      ['mcpServers: 7', 'mcpServers', /`mcpServers`/],
      ['initialPrompt: [a]', 'initialPrompt', /`initialPrompt` is a list/],
    ];
    for (const [line, field, reason] of cases) {
      const { agent, warnings } = agentOf(header(line));
      expect(agent[field as keyof typeof agent]).toBeUndefined();
      expect(warnings).toEqual([
        expect.objectContaining({
          severity: 'warning',
          line: 4,
          agentType: 'helper',
          reason: expect.stringMatching(reason),
        }),
      ]);
    }
  });

  it('refuses the agent when a field that limits it is unreadable', () => {
    const cases: Array<[string, RegExp]> = [
      ['permissionMode: yolo', /permissionMode/],
      ['tools: 42', /`tools` is number 42/],
      ['tools: [Read, 3]', /`tools` has an item that is number 3/],
      ['disallowedTools: { Bash: true }', /`disallowedTools` is a mapping/],
      ['isolation: remote', /`isolation`/],
      ['hooks: run-linter', /`hooks`/],
    ];
    for (const [line, reason] of cases) {
      expect(diagnosticOf(header(line))).toMatchObject({
        severity: 'error',
        line: 4,
        agentType: 'helper',
        reason: expect.stringMatching(reason),
      });
    }
  });

  it('ignores an empty tools value with a warning instead of granting nothing', () => {
    const { agent, warnings } = agentOf(header('tools: ""'));
    expect(agent.tools).toBeUndefined();
    expect(warnings[0]?.reason).toMatch(/`tools` is empty/);
    expect(agentOf(header('tools:')).agent.tools).toBeUndefined();
  });

  it('notes unknown keys with their line and keeps the agent', () => {
    const { warnings } = agentOf(header('category: quality\nauthor: someone'));
    expect(warnings).toEqual([
      expect.objectContaining({
        severity: 'info',
        line: 4,
        reason: 'unknown key `category` was ignored',
      }),
      expect.objectContaining({
        severity: 'info',
        line: 5,
        reason: 'unknown key `author` was ignored',
      }),
    ]);
  });

  it('warns when the body is empty', () => {
    const { agent, warnings } = agentOf('---\nname: a\ndescription: b\n---\n');
    expect(agent.getSystemPrompt()).toBe('');
    expect(warnings[0]).toMatchObject({
      severity: 'warning',
      reason: expect.stringMatching(/body is empty/),
    });
  });

  it('reads descriptions with an unquoted ": " leniently and says so', () => {
    const { agent, warnings } = agentOf(
      '---\nname: a\ndescription: Use when: the user asks. Example: user: "hi"\ntools: Read\n---\nBody',
    );
    expect(agent.whenToUse).toBe('Use when: the user asks. Example: user: "hi"');
    expect(agent.tools).toEqual(['Read']);
    expect(warnings).toEqual([
      expect.objectContaining({
        severity: 'info',
        line: 3,
        reason: expect.stringMatching(/not strict YAML/),
      }),
    ]);
  });

  it('leaves valid YAML alone: a ": " inside a trailing comment is still a comment', () => {
    const { agent, warnings } = agentOf(
      '---\nname: a\ndescription: Reviews code # owner: platform team\n---\nBody',
    );
    expect(agent.whenToUse).toBe('Reviews code');
    expect(warnings).toEqual([]);
  });

  it('reports the original YAML error when quoting does not make the frontmatter readable', () => {
    expect(
      diagnosticOf('---\nname: a\ndescription: Use when: x\ntools: [Read\n---\nBody'),
    ).toMatchObject({
      severity: 'error',
      line: 3,
      reason: expect.stringMatching(/^invalid YAML frontmatter/),
    });
  });

  it('skips HTML comments above the frontmatter, even over several lines, and notes the first', () => {
    const { agent, warnings } = agentOf(
      '<!-- one -->\n\n<!--\n  two\n-->\n---\nname: a\ndescription: b\nmodel: opus\n---\nBody',
    );
    expect(agent).toMatchObject({ agentType: 'a', whenToUse: 'b', model: 'opus' });
    expect(agent.getSystemPrompt()).toBe('Body');
    expect(warnings).toEqual([
      expect.objectContaining({
        severity: 'info',
        line: 1,
        reason: expect.stringMatching(/HTML comment/),
      }),
    ]);
  });

  it('reads a comment followed by a Markdown rule as plain Markdown, not as unclosed frontmatter', () => {
    expect(diagnosticOf('<!-- badges -->\n---\n# Title\n\nText')).toMatchObject({
      severity: 'info',
      reason: expect.stringMatching(/no YAML frontmatter/),
    });
    expect(diagnosticOf('<!-- note --> text\n---\nname: a\ndescription: b\n---\n')).toMatchObject({
      severity: 'info',
    });
  });

  it('reports invalid YAML with the line in the file', () => {
    expect(
      diagnosticOf('\n\n---\nname: a\ndescription: b\nmodel: [sonnet\n---\nBody'),
    ).toMatchObject({
      severity: 'error',
      reason: expect.stringMatching(/^invalid YAML frontmatter/),
      line: 6,
    });
    expect(diagnosticOf('---\nname: a\nname: b\ndescription: c\n---\n')).toMatchObject({
      severity: 'error',
      line: 3,
    });
  });

  it('refuses a missing, empty or non-text name and description', () => {
    expect(diagnosticOf('---\ndescription: x\n---\n').reason).toMatch(/missing `name`/);
    expect(diagnosticOf('---\nname: "  "\ndescription: x\n---\n').reason).toMatch(/missing `name`/);
    expect(diagnosticOf('---\nname: 12\ndescription: x\n---\n')).toMatchObject({
      line: 2,
      reason: expect.stringMatching(/must be text/),
    });
    expect(diagnosticOf('---\nname: a\n---\n').reason).toMatch(/missing `description`/);
    expect(diagnosticOf('---\nname: a\ndescription: [x]\n---\n').reason).toMatch(
      /`description` must be text/,
    );
    expect(diagnosticOf('---\n---\nBody').reason).toMatch(/missing `name`/);
  });

  it('refuses names that could escape a directory', () => {
    for (const name of ['../x', 'a/b', '"a\\\\b"', '..', '"a\\tb"', '"a\\u0000b"', '.']) {
      expect(diagnosticOf(`---\nname: ${name}\ndescription: x\n---\n`)).toMatchObject({
        severity: 'error',
        line: 2,
      });
    }
  });

  it('skips text without frontmatter with an info note', () => {
    expect(diagnosticOf('# Readme\n\nNot an agent.')).toMatchObject({ severity: 'info' });
    expect(diagnosticOf('')).toMatchObject({ severity: 'info' });
  });

  it('namespaces plugin agents as plugin:name', () => {
    const result = parse('---\nname: linter\ndescription: Lints.\n---\nLint.', {
      plugin: 'acme-tools',
    });
    expect(result.ok && result.agent).toMatchObject({
      agentType: 'acme-tools:linter',
      plugin: 'acme-tools',
    });
  });
});

describe('parseAgentFromMarkdown on any input', () => {
  const yamlish = fc.array(
    fc.oneof(
      fc.constantFrom(
        '---',
        'name: a',
        'description: b',
        'tools: Read, Grep',
        '  - x',
        'x: &a [1]',
        'y: *a',
        ': :',
        '"',
        "'",
        '[',
        '{',
        '\t',
        '\\n',
        '\r',
        '\uFEFF',
        '#',
      ),
      fc.string({ maxLength: 20 }),
    ),
    { maxLength: 12 },
  );

  it('returns a definition or a diagnostic and never throws, for any string', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'grapheme' }),
          yamlish.map((lines) => lines.join('\n')),
        ),
        (content) => {
          const result = parse(content);
          if (result.ok) {
            expect(validateAgentName(result.agent.agentType)).toBeUndefined();
            expect(result.agent.whenToUse.trim().length).toBeGreaterThan(0);
            expect(typeof result.agent.getSystemPrompt()).toBe('string');
          } else {
            expect(result.diagnostic.reason.length).toBeGreaterThan(0);
            expect(['error', 'warning', 'info']).toContain(result.diagnostic.severity);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('gives the same definition for LF and CRLF line ends', () => {
    const body = fc
      .array(fc.stringMatching(/^[A-Za-z ,.]{0,30}$/), { maxLength: 5 })
      .map((lines) => lines.join('\n'));
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z][a-z-]{0,15}$/),
        fc.stringMatching(/^[A-Za-z][A-Za-z ,.]{0,40}$/),
        body,
        (name, description, text) => {
          const content = `---\nname: ${name}\ndescription: ${description}\n---\n${text}\n`;
          const lf = parse(content);
          const crlf = parse(content.replace(/\n/g, '\r\n'));
          expect(lf.ok).toBe(true);
          expect(crlf.ok).toBe(true);
          if (lf.ok && crlf.ok) {
            expect(crlf.agent.agentType).toBe(lf.agent.agentType);
            expect(crlf.agent.whenToUse).toBe(lf.agent.whenToUse);
            expect(crlf.agent.getSystemPrompt()).toBe(lf.agent.getSystemPrompt());
          }
        },
      ),
    );
  });
});
