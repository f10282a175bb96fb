export { createReadTool, ReadInput } from './read-tool.js';
export type { ReadOutput, ReadToolOptions } from './read-tool.js';
export { createWriteTool, WriteInput } from './write-tool.js';
export type { WriteOutput } from './write-tool.js';
export { createEditTool, EditInput } from './edit-tool.js';
export type { EditOutput } from './edit-tool.js';
export { createGlobTool, GlobInput } from './glob-tool.js';
export type { GlobOutput, GlobToolOptions } from './glob-tool.js';
export { createGrepTool, GrepInput } from './grep-tool.js';
export type { GrepOutput, GrepToolOptions } from './grep-tool.js';
export {
  BashInput,
  DEFAULT_BASH_TIMEOUT_MS,
  MAX_BASH_TIMEOUT_MS,
  createBashTool,
} from './bash-tool.js';
export type { BashOutput, BashToolOptions } from './bash-tool.js';
export {
  BackgroundShellRegistry,
  DEFAULT_MAX_BACKGROUND_LOG_BYTES,
  STALE_BACKGROUND_LOG_MS,
  defaultBackgroundOutputDirectory,
  getBackgroundShellOutput,
  getDefaultBackgroundShellRegistry,
  releaseBackgroundShell,
} from './background-shell-registry.js';
export type {
  BackgroundShell,
  BackgroundShellOutput,
  BackgroundShellRegistryOptions,
  StartBackgroundShellOptions,
} from './background-shell-registry.js';
export { reapOrphanedShells } from './shell-records.js';
export { assessReadOnlyCommand, isReadOnlyCommand } from './read-only-command.js';
export type { ReadOnlyCommandAssessment } from './read-only-command.js';
export {
  MAX_ANALYZED_COMMAND_LENGTH,
  analyzeShellCommand,
  analyzeShellCommandSync,
} from './analyze-shell-command.js';
export type { ShellAnalysis, ShellCommand, ShellWord } from './analyze-shell-command.js';
export { configureShellParser, isShellParserLoaded, loadShellParser } from './shell-parser.js';
export type { ShellParserWasmPaths } from './shell-parser.js';
export {
  allowedByShellRules,
  deniedByShellRule,
  parseShellRuleContent,
  shellCommandMatchesRule,
} from './match-shell-rule.js';
export type { ShellRule } from './match-shell-rule.js';
export { getBuiltinTools } from './get-builtin-tools.js';
export type { BuiltinToolsOptions } from './get-builtin-tools.js';
export { toolInputJSONSchema, toolToApiSchema } from './tool-to-api-schema.js';
export type { ApiToolSchema } from './tool-to-api-schema.js';
export {
  getAllowedRoots,
  isPathInside,
  resolvePathWithinRoots,
  resolveToolPath,
} from './resolve-path-within-roots.js';
export type { ResolvedPath } from './resolve-path-within-roots.js';
export { openConfinedFile, openConfinedFileWithStats } from './open-confined-file.js';
export type { ConfinedFile, OpenConfinedFileOptions } from './open-confined-file.js';
export { compileGlob, splitGlobBase } from './glob-pattern.js';
export { findRequiredLiteral } from './required-literal.js';
export { walkFiles, DEFAULT_SKIPPED_DIRECTORIES } from './walk-files.js';
export type { WalkedFile, WalkFilesOptions } from './walk-files.js';
export { createMcpManager } from './mcp-manager.js';
export type { McpManager, McpManagerOptions, McpServerConfig, McpSnapshot } from './mcp-manager.js';
export { createMcpTool, mcpResultToText } from './mcp-tool.js';
export type { McpToolDefinition } from './mcp-tool.js';
export { assignMcpToolNames, buildMcpToolName, normalizeMcpName } from './mcp-tool-name.js';
