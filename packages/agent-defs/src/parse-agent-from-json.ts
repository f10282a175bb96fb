import { type AgentSource } from '@delegate/core';
import { type AgentDiagnostic, type ParseAgentResult } from './agent-diagnostic.js';
import { normalizeAgentFields } from './normalize-agent-fields.js';
import { truncateForDiagnostic } from './truncate-for-diagnostic.js';
import { validateAgentName } from './validate-agent-name.js';

/** Label used as `filePath` for definitions given on the command line. */
export const FLAG_AGENTS_LABEL = '--agents';

/** Where a JSON definition came from, for diagnostics and `baseDir`. */
export type ParseAgentFromJsonOptions = {
  /** Label or path used in diagnostics; default `--agents`. */
  filePath?: string;
  /** Directory recorded as the definition's `baseDir`; default the `filePath` label. */
  baseDir?: string;
};

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value;
}

function parse(
  name: unknown,
  value: unknown,
  source: AgentSource,
  options: ParseAgentFromJsonOptions,
): ParseAgentResult {
  const filePath = options.filePath ?? FLAG_AGENTS_LABEL;
  const fail = (diagnostic: Omit<AgentDiagnostic, 'filePath'>): ParseAgentResult => ({
    ok: false,
    diagnostic: { filePath, ...diagnostic },
  });
  if (typeof name !== 'string')
    return fail({ severity: 'error', reason: `agent name must be text, not ${describe(name)}` });
  const agentType = name.trim();
  const nameProblem = validateAgentName(agentType);
  if (nameProblem !== undefined) {
    return fail({
      severity: 'error',
      reason: `agent name ${JSON.stringify(truncateForDiagnostic(agentType))} ${nameProblem}; use letters, digits and dashes`,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail({
      agentType,
      severity: 'error',
      reason: `agent ${JSON.stringify(truncateForDiagnostic(agentType))} must be an object like { "description": "...", "prompt": "..." }, not ${describe(value)}`,
    });
  }
  const record = value as Record<string, unknown>;
  const { description, prompt } = record;
  if (typeof description !== 'string' || description.trim() === '') {
    return fail({
      agentType,
      severity: 'error',
      reason: `agent ${JSON.stringify(truncateForDiagnostic(agentType))} needs a "description" (text saying when to use it)`,
    });
  }
  if (typeof prompt !== 'string' || prompt.trim() === '') {
    return fail({
      agentType,
      severity: 'error',
      reason: `agent ${JSON.stringify(truncateForDiagnostic(agentType))} needs a "prompt" (its system prompt as text)`,
    });
  }
  // Claude Code refuses an `--agents` entry whose hooks do not fit, unlike an agent file.
  const normalized = normalizeAgentFields(record, {
    filePath,
    agentType,
    extraKeys: ['prompt'],
    invalidHooks: 'reject',
  });
  if (!normalized.ok) return { ok: false, diagnostic: normalized.diagnostic };
  const systemPrompt = prompt.trim();
  return {
    ok: true,
    agent: {
      agentType,
      whenToUse: description.trim(),
      ...normalized.fields,
      source,
      baseDir: options.baseDir ?? filePath,
      getSystemPrompt: () => systemPrompt,
    },
    warnings: normalized.warnings,
  };
}

/**
 * Parses one entry of the `--agents` JSON object (`{ description, prompt, tools, model, … }`)
 * into a definition named `name`. Never throws, whatever the value.
 */
export function parseAgentFromJson(
  name: string,
  value: unknown,
  source: AgentSource,
  options: ParseAgentFromJsonOptions = {},
): ParseAgentResult {
  try {
    return parse(name, value, source, options);
  } catch (error) {
    return {
      ok: false,
      diagnostic: {
        filePath: options.filePath ?? FLAG_AGENTS_LABEL,
        severity: 'error',
        reason: `agent ${JSON.stringify(truncateForDiagnostic(String(name)))} could not be parsed: ${truncateForDiagnostic(error instanceof Error ? error.message : String(error))}`,
      },
    };
  }
}
