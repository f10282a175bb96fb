import type { Tool } from '@delegate/core';
import { type BashToolOptions, createBashTool } from './bash-tool.js';
import { createEditTool } from './edit-tool.js';
import { type GlobToolOptions, createGlobTool } from './glob-tool.js';
import { type GrepToolOptions, createGrepTool } from './grep-tool.js';
import { type ReadToolOptions, createReadTool } from './read-tool.js';
import { createWriteTool } from './write-tool.js';

/** Options of each built-in tool. */
export type BuiltinToolsOptions = {
  read?: ReadToolOptions;
  glob?: GlobToolOptions;
  grep?: GrepToolOptions;
  bash?: BashToolOptions;
};

/** Returns the six built-in tools: Read, Write, Edit, Glob, Grep and Bash. */
export function getBuiltinTools(options: BuiltinToolsOptions = {}): Tool[] {
  return [
    createReadTool(options.read),
    createWriteTool(),
    createEditTool(),
    createGlobTool(options.glob),
    createGrepTool(options.grep),
    createBashTool(options.bash),
  ];
}
