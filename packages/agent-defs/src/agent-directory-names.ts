import { join } from 'node:path';

/** Folders, relative to a home or project directory, that hold agent files; a later one wins a tie. */
export const AGENT_DIRECTORY_NAMES: readonly string[] = [
  join('.claude', 'agents'),
  join('.delegate', 'agents'),
];
