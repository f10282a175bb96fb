import { isAbsolute, relative, resolve, sep } from 'node:path';
import { DelegateError, checkString } from '@delegate/core';

/**
 * Throws a DelegateError (PATH_ESCAPE) unless `target` lies strictly inside `root`
 * (the root itself does not count). Both paths are resolved first; symbolic links are
 * not followed.
 */
export function assertInsideRoot(root: string, target: string): void {
  checkString('assertInsideRoot()', 'root', root);
  checkString('assertInsideRoot()', 'target', target);
  const resolvedRoot = resolve(root);
  const resolvedTarget = resolve(target);
  const path = relative(resolvedRoot, resolvedTarget);
  const firstSegment = path.split(sep)[0];
  if (path === '' || firstSegment === '..' || isAbsolute(path)) {
    throw new DelegateError(
      'PATH_ESCAPE',
      `Refusing to touch "${resolvedTarget}": it is not inside the memory root "${resolvedRoot}". ` +
        'Agent memory only reads and changes folders under its root; check the agent type and options.',
      { details: { root: resolvedRoot, target: resolvedTarget } },
    );
  }
}
