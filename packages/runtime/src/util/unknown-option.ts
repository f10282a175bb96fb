import { DelegateError, closestKey } from '@delegate/core';

/** The known key `key` was most likely meant as (core's `closestKey`, loose: for API options). */
export { closestKey };

/**
 * What is wrong with an unknown key, to follow its path in a message: `is not an option (did
 * you mean budgetTokens?)` when a known key is close, else the known keys (or, for a long
 * list, `listedIn`, the type that documents them).
 */
export function unknownOptionProblem(options: {
  /** The key given. */
  key: string;
  /** The keys the object takes. */
  known: readonly string[];
  /** The type that lists them, named instead of a long list (`DelegateSessionOptions`). */
  listedIn?: string;
}): string {
  const { key, known, listedIn } = options;
  const meant = closestKey(key, known);
  if (meant !== undefined) return `is not an option (did you mean ${meant}?)`;
  if (listedIn !== undefined) return `is not an option (check the spelling against ${listedIn})`;
  return `is not an option (the options here are ${known.join(', ')})`;
}

/**
 * Throws `INVALID_ARGUMENT` for the first key of `value` (the object at `option`) outside
 * `known`, naming its path after `where` (`query(): params.thinking.colour is not an option …`).
 */
export function checkKnownKeys(options: {
  where: string;
  option: string;
  value: Record<string, unknown>;
  known: readonly string[];
  listedIn?: string;
}): void {
  const { where, option, value, known, listedIn } = options;
  const key = Object.keys(value).find((name) => !known.includes(name));
  if (key === undefined) return;
  const path = `${option}.${key}`;
  const problem = unknownOptionProblem({ key, known, ...(listedIn ? { listedIn } : {}) });
  throw new DelegateError('INVALID_ARGUMENT', `${where}: ${path} ${problem}.`, {
    details: { option: path },
  });
}
