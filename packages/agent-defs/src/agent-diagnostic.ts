import { type AgentDefinition, type AgentSource } from '@delegate/core';

/** How serious a diagnostic is: `error` loses the agent, `warning` loses a field or a file, `info` is a note. */
export type AgentDiagnosticSeverity = 'error' | 'warning' | 'info';

/** One problem found while reading an agent definition. */
export type AgentDiagnostic = {
  /** File the problem is in (for `--agents` JSON, the label `--agents`). */
  filePath: string;
  /** 1-based line in the file, when the problem has one. */
  line?: number;
  /** What is wrong and what to do about it. */
  reason: string;
  /** How serious the problem is. */
  severity: AgentDiagnosticSeverity;
  /** Agent type the problem belongs to, once known. */
  agentType?: string;
};

/** The outcome of parsing one agent: a definition with notes, or the reason there is none. */
export type ParseAgentResult =
  | {
      /** The definition was usable. */
      ok: true;
      /** The parsed definition. */
      agent: AgentDefinition;
      /** Fields dropped or adjusted (`warning`) and unknown keys (`info`). */
      warnings: AgentDiagnostic[];
    }
  | {
      /** No definition could be made. */
      ok: false;
      /** Why; `info` severity when the input is simply not an agent (a Markdown file without frontmatter). */
      diagnostic: AgentDiagnostic;
    };

/** An agent file that did not load, with the agent type it would have defined when that is known. */
export type FailedAgentFile = {
  /** The file. */
  filePath: string;
  /** Source the file belongs to. */
  source: AgentSource;
  /**
   * The agent type the file would have defined (from its `name`, read even when the YAML is
   * broken), so a request for that type can be answered with why it is missing.
   */
  agentType?: string;
  /** The error that kept the file from loading. */
  diagnostic: AgentDiagnostic;
};
