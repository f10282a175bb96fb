import { measureYamlNesting } from './measure-yaml-nesting.js';
import {
  MAX_YAML_ALIAS_COUNT,
  YAML_LIMIT_CODES,
  parseFullYaml,
  type YamlFailure,
} from './parse-full-yaml.js';
import { parseSimpleYaml, type DuplicateKeys } from './parse-simple-yaml.js';
import { repairLikeClaudeCode, type QuotedLine } from './repair-like-claude-code.js';

/**
 * Longest frontmatter read, in characters; a longer one is refused before any parsing. Room
 * for descriptions with hundreds of `<example>` blocks (real files reach ~90k characters),
 * while a hostile file of many small keys still parses in about a tenth of a second.
 */
export const MAX_FRONTMATTER_LENGTH = 256 * 1024;

/** Deepest nesting a frontmatter may have (indentation levels, list markers, brackets). */
export const MAX_FRONTMATTER_DEPTH = 32;

/** A key that the repaired frontmatter gives more than once (the last one is used). */
export type RepeatedKey = {
  /** The key. */
  key: string;
  /** 1-based lines of each occurrence, within the YAML text. */
  lines: number[];
};

/** What Claude Code's repair pass did to frontmatter that strict YAML refused. */
export type FrontmatterRepair = {
  /** Why strict YAML refused the text. */
  strictFailure: YamlFailure;
  /** Lines whose value was put in quotes. */
  quotedLines: QuotedLine[];
  /** Lines whose leading tabs became spaces. */
  tabLines: number[];
  /** Top-level keys given more than once. */
  repeatedKeys: RepeatedKey[];
};

/** Frontmatter read into a mapping the way Claude Code reads it, or the reason it could not be. */
export type FrontmatterReading =
  | {
      ok: true;
      /** The top-level mapping. */
      record: Record<string, unknown>;
      /** 1-based line (within the YAML text) of each top-level key. */
      keyLines: Map<string, number>;
      /** Set when strict YAML refused the text and the repair pass made it readable. */
      repair?: FrontmatterRepair;
    }
  | {
      ok: false;
      /**
       * What stopped the reading: one of Delegate's limits (size, depth, aliases, `!!binary`),
       * a YAML error that Claude Code's repair does not fix, or a value that is not a mapping.
       */
      stage: 'limit' | 'yaml' | 'not-a-mapping';
      /** Why. */
      failure: YamlFailure;
      /** Why strict YAML refused the text, when the repair pass was tried too. */
      strictFailure?: YamlFailure;
    };

type Parsed =
  { ok: true; value: unknown; keyLines: Map<string, number> } | { ok: false; failure: YamlFailure };

function checkLength(text: string): YamlFailure | undefined {
  if (text.length <= MAX_FRONTMATTER_LENGTH) return undefined;
  return {
    code: 'too-long',
    message: `the frontmatter is ${text.length} characters long, over the ${MAX_FRONTMATTER_LENGTH}-character limit for agent files; move long text into the body`,
  };
}

// Depth and aliases, checked only before the full parser: the simple one is linear anyway.
function checkStructure(text: string): YamlFailure | undefined {
  const nesting = measureYamlNesting(text);
  if (nesting.depth > MAX_FRONTMATTER_DEPTH) {
    return {
      code: 'too-deep',
      line: nesting.line,
      message: `the frontmatter nests more than ${MAX_FRONTMATTER_DEPTH} levels deep; agent definitions never need that — flatten it`,
    };
  }
  if (nesting.aliases > MAX_YAML_ALIAS_COUNT) {
    return {
      code: 'alias-bomb',
      message: `the frontmatter holds ${nesting.aliases} aliases (*name), more than ${MAX_YAML_ALIAS_COUNT} (a possible alias bomb); write the values out`,
    };
  }
  return undefined;
}

function parseYaml(text: string, duplicateKeys: DuplicateKeys): Parsed {
  const simple = parseSimpleYaml(text, duplicateKeys);
  switch (simple.kind) {
    case 'mapping':
      return { ok: true, value: simple.record, keyLines: simple.keyLines };
    case 'error':
      return {
        ok: false,
        failure: {
          code: simple.code,
          line: simple.line,
          message:
            simple.code === 'duplicate-key'
              ? `the key \`${simple.key}\` is given twice`
              : `the value of \`${simple.key}\` holds ': ', which YAML reads as a nested key`,
        },
      };
    case 'unsupported': {
      const overLimit = checkStructure(text);
      return overLimit === undefined
        ? parseFullYaml(text, duplicateKeys)
        : { ok: false, failure: overLimit };
    }
  }
}

function describeValue(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return 'plain text';
  return typeof value;
}

function toReading(parsed: Parsed & { ok: true }, repair?: FrontmatterRepair): FrontmatterReading {
  const { value } = parsed;
  if (value === null || value === undefined) return { ok: true, record: {}, keyLines: new Map() };
  if (typeof value !== 'object' || Array.isArray(value) || value instanceof Map) {
    return {
      ok: false,
      stage: 'not-a-mapping',
      failure: {
        code: 'not-a-mapping',
        line: 1,
        message: `the frontmatter is ${describeValue(value)}, not a mapping of keys to values`,
      },
      ...(repair === undefined ? {} : { strictFailure: repair.strictFailure }),
    };
  }
  return {
    ok: true,
    record: value as Record<string, unknown>,
    keyLines: parsed.keyLines,
    ...(repair === undefined ? {} : { repair }),
  };
}

function findRepeatedKeys(text: string): RepeatedKey[] {
  const lines = new Map<string, number[]>();
  text.split('\n').forEach((line, index) => {
    const match = /^([A-Za-z_][\w-]*)[ \t]*:(?:\s|$)/.exec(line);
    if (match === null) return;
    const key = match[1] ?? '';
    const seen = lines.get(key);
    if (seen === undefined) lines.set(key, [index + 1]);
    else seen.push(index + 1);
  });
  return [...lines].filter(([, at]) => at.length > 1).map(([key, at]) => ({ key, lines: at }));
}

/**
 * Reads frontmatter YAML as Claude Code does: strict YAML first; if that fails, one repair
 * pass ({@link repairLikeClaudeCode}) and a second parse with repeated keys allowed (the
 * last one wins). Before any parsing the text must fit the budget
 * ({@link MAX_FRONTMATTER_LENGTH}, {@link MAX_FRONTMATTER_DEPTH}), so no file can stall a
 * load. Never throws.
 */
export function parseFrontmatterYaml(text: string): FrontmatterReading {
  const overBudget = checkLength(text);
  if (overBudget !== undefined) return { ok: false, stage: 'limit', failure: overBudget };
  const strict = parseYaml(text, 'error');
  if (strict.ok) return toReading(strict);
  // Delegate's own limits are final: Claude Code's parser would have read the text, so its
  // repair pass never runs on it.
  if (YAML_LIMIT_CODES.has(strict.failure.code)) {
    return { ok: false, stage: 'limit', failure: strict.failure };
  }

  const repaired = repairLikeClaudeCode(text);
  const repairedOverBudget = checkLength(repaired.text);
  if (repairedOverBudget !== undefined) {
    return { ok: false, stage: 'limit', failure: repairedOverBudget };
  }
  const second = parseYaml(repaired.text, 'last-wins');
  if (!second.ok) {
    return { ok: false, stage: 'yaml', failure: second.failure, strictFailure: strict.failure };
  }
  return toReading(second, {
    strictFailure: strict.failure,
    quotedLines: repaired.quotedLines,
    tabLines: repaired.tabLines,
    repeatedKeys: findRepeatedKeys(repaired.text),
  });
}
