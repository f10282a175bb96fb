import { describe, expect, it } from 'vitest';
import { parseAgentFromJson } from './parse-agent-from-json.js';
import { parseAgentFromMarkdown } from './parse-agent-from-markdown.js';

const markdown = (lines: string) =>
  parseAgentFromMarkdown({
    filePath: '/agents/helper.md',
    baseDir: '/agents',
    content: `---\nname: helper\ndescription: Helps.\n${lines}\n---\n\nPrompt.\n`,
    source: 'projectSettings',
  });

describe('budget keys (Delegate extensions)', () => {
  it('reads maxTokens and maxCostUsd from frontmatter, numbers written as text included', () => {
    const result = markdown('maxTokens: "50000"\nmaxCostUsd: $0.25');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.agent).toMatchObject({ maxTokens: 50_000, maxCostUsd: 0.25 });
    expect(result.warnings).toEqual([]);
  });

  it('reads them from a JSON definition', () => {
    const result = parseAgentFromJson(
      'worker',
      { description: 'Works.', prompt: 'Work.', maxTokens: 1200, maxCostUsd: 1.5 },
      'flagSettings',
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.agent).toMatchObject({ maxTokens: 1200, maxCostUsd: 1.5 });
    expect(result.warnings).toEqual([]);
  });

  it('drops a bad budget with a warning that names the key, and still loads the agent', () => {
    const result = markdown('maxTokens: -5\nmaxCostUsd: lots');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.agent.maxTokens).toBeUndefined();
    expect(result.agent.maxCostUsd).toBeUndefined();
    expect(result.warnings.map((warning) => warning.reason)).toEqual([
      expect.stringMatching(/`maxTokens`.*no token budget/),
      expect.stringMatching(/`maxCostUsd`.*no cost budget/),
    ]);
  });
});
