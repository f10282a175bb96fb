export type {
  AgentDiagnostic,
  AgentDiagnosticSeverity,
  FailedAgentFile,
  ParseAgentResult,
} from './agent-diagnostic.js';
export { formatAgentDiagnostic } from './format-agent-diagnostic.js';
export { explainUnknownAgentType } from './explain-unknown-agent-type.js';
export {
  EXPLORE_AGENT_TYPE,
  FORK_AGENT_TYPE,
  GENERAL_PURPOSE_AGENT_TYPE,
  ONE_SHOT_BUILTIN_AGENT_TYPES,
  PLAN_AGENT_TYPE,
  READ_ONLY_DISALLOWED_TOOLS,
} from './agent-types.js';
export { GENERAL_PURPOSE_AGENT } from './general-purpose-agent.js';
export { DEFAULT_EXPLORE_MODEL, createExploreAgent } from './explore-agent.js';
export type { ExploreAgentOptions } from './explore-agent.js';
export { PLAN_AGENT } from './plan-agent.js';
export { FORK_AGENT } from './fork-agent.js';
export { getBuiltInAgents } from './get-built-in-agents.js';
export type { BuiltInAgentsOptions } from './get-built-in-agents.js';
export { splitListValue } from './split-list-value.js';
export { readToolList, splitToolList } from './read-tool-list.js';
export type { ToolListField, ToolListReading } from './read-tool-list.js';
export {
  MAX_AGENT_NAME_LENGTH,
  RESERVED_AGENT_NAMES,
  isPathSafeAgentName,
  validateAgentName,
} from './validate-agent-name.js';
export { agentNameSkeleton } from './agent-name-skeleton.js';
export { describeAgentOverrides } from './describe-agent-overrides.js';
export {
  MAX_AGENTS_DIRECTORY_DEPTH,
  MAX_AGENT_FILES_PER_DIRECTORY,
  MAX_AGENT_SUBDIRECTORIES,
} from './list-markdown-files.js';
export { KNOWN_AGENT_KEYS } from './normalize-agent-fields.js';
export { MAX_FRONTMATTER_DEPTH, MAX_FRONTMATTER_LENGTH } from './parse-frontmatter-yaml.js';
export {
  MAX_YAML_ALIAS_CHARACTERS,
  MAX_YAML_ALIAS_COUNT,
  MAX_YAML_ALIAS_EXPANSION,
} from './parse-full-yaml.js';
export { MAX_QUOTED_CHARACTERS } from './truncate-for-diagnostic.js';
export { parseAgentFromMarkdown } from './parse-agent-from-markdown.js';
export type { ParseAgentFromMarkdownOptions } from './parse-agent-from-markdown.js';
export { FLAG_AGENTS_LABEL, parseAgentFromJson } from './parse-agent-from-json.js';
export type { ParseAgentFromJsonOptions } from './parse-agent-from-json.js';
export { MAX_AGENT_FILE_BYTES, readAgentFile } from './read-agent-file.js';
export { readConfinedFile } from './read-confined-file.js';
export type { ConfinedRead, ReadConfinedFileOptions } from './read-confined-file.js';
export type { ReadAgentFileOptions } from './read-agent-file.js';
export {
  DEFAULT_READ_CONCURRENCY,
  LOAD_SLICE_MS,
  loadAgentsFromDirectories,
} from './load-agents-from-directories.js';
export type {
  AgentFolder,
  LoadAgentsFromDirectoriesOptions,
  LoadedAgents,
} from './load-agents-from-directories.js';
export {
  MAX_PLUGIN_MANIFEST_BYTES,
  PLUGIN_MANIFEST_PATHS,
  loadPluginAgents,
  readPluginManifest,
  readPluginName,
} from './load-plugin-agents.js';
export type { LoadPluginAgentsOptions, PluginManifest, PluginName } from './load-plugin-agents.js';
export { findProjectAgentDirectories, findProjectRoots } from './find-project-roots.js';
export type { FindProjectRootsOptions, ProjectAgentDirectory } from './find-project-roots.js';
export { AGENT_DIRECTORY_NAMES } from './agent-directory-names.js';
export { getActiveAgentsFromList } from './get-active-agents-from-list.js';
export {
  clearAgentDefinitionsCache,
  getAgentDefinitionsWithOverrides,
} from './get-agent-definitions-with-overrides.js';
export type {
  AgentDefinitionsLoadResult,
  AgentDefinitionsOptions,
} from './get-agent-definitions-with-overrides.js';
export { restrictProjectAgent, restrictProjectAgents } from './restrict-project-agents.js';
export type { IgnoredAgentField } from './restrict-project-agents.js';
