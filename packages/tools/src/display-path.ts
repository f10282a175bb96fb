import { relative, sep } from 'node:path';
import { isPathInside } from './resolve-path-within-roots.js';

/** Shows a path relative to `cwd` when it lies inside it (shorter for the model), else absolute. */
export function displayPath(absolutePath: string, cwd: string): string {
  if (!isPathInside(absolutePath, cwd) || absolutePath === cwd) return absolutePath;
  return relative(cwd, absolutePath).split(sep).join('/');
}
