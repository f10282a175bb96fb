import { normalize, sep } from 'node:path';

/**
 * Returns the key the file-state cache stores `path` under: `path.normalize` (so
 * `a/./b`, `a//b` and `a/c/../b` meet at `a/b`) without a trailing separator, except
 * for the root itself. Relative paths stay relative: resolving them against the
 * process directory would be wrong for an agent whose `cwd` differs, so tools should
 * pass absolute paths.
 */
export function normalizeCachePath(path: string): string {
  const normalized = normalize(path);
  if (normalized.length > 1 && normalized.endsWith(sep)) {
    const trimmed = normalized.replace(/[\\/]+$/, '');
    // A bare root (`/`, `C:\`) keeps its separator: it names a different place than `C:`.
    return trimmed === '' || /^[A-Za-z]:$/.test(trimmed) ? normalized : trimmed;
  }
  return normalized;
}
