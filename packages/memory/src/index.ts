export { appendMemoryEntry } from './append-memory-entry.js';
export { assertInsideRoot } from './assert-inside-root.js';
export { buildAgentMemoryPrompt, describeMemoryScope } from './build-agent-memory-prompt.js';
export type { AgentMemoryPromptParts } from './build-agent-memory-prompt.js';
export { checkMemoryDirectory } from './check-memory-directory.js';
export type { MemoryDirectoryCheck } from './check-memory-directory.js';
export { clearMemory } from './clear-memory.js';
export { decodeAgentTypeFromPath } from './decode-agent-type-from-path.js';
export { getAgentMemoryDir } from './get-agent-memory-dir.js';
export { MEMORY_INDEX_FILE_NAME, getAgentMemoryFile } from './get-agent-memory-file.js';
export {
  AGENT_MEMORY_SCOPES,
  DEFAULT_ROOT_DIR_NAME,
  getAgentMemoryRoot,
} from './get-agent-memory-root.js';
export type { AgentMemoryPathOptions } from './get-agent-memory-root.js';
export type { MemoryFile } from './list-memory-files.js';
export { listMemory } from './list-memory.js';
export type { AgentMemoryEntry, ListMemoryOptions } from './list-memory.js';
export { loadAgentMemoryPrompt } from './load-agent-memory-prompt.js';
export { prepareAgentMemory } from './prepare-agent-memory.js';
export type { AgentMemoryPromptOptions, PreparedAgentMemory } from './prepare-agent-memory.js';
export {
  DEFAULT_MEMORY_INDEX_MAX_BYTES,
  DEFAULT_MEMORY_INDEX_MAX_LINES,
  readBoundedMemoryIndex,
} from './read-bounded-memory-index.js';
export type { MemoryIndexRead, MemoryIndexTruncation } from './read-bounded-memory-index.js';
export { readMemory } from './read-memory.js';
export { MAX_MEMORY_FILE_BYTES } from './read-regular-file.js';
export type { AgentMemorySnapshot } from './read-memory.js';
export {
  MAX_AGENT_FOLDER_NAME_LENGTH,
  sanitizeAgentTypeForPath,
} from './sanitize-agent-type-for-path.js';
export { writeMemoryIndex } from './write-memory-index.js';
export type { WriteMemoryIndexOptions } from './write-memory-index.js';
