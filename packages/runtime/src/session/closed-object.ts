import { isObject } from '@delegate/core';
import { z } from 'zod';
import { unknownOptionProblem } from '../util/unknown-option.js';

/** The `params` an unknown-key issue of {@link closedObject} carries, so a message can say `<path> is not an option`. */
export const UNKNOWN_OPTION = { unknownOption: true } as const;

/** True for an issue {@link closedObject} raised for a key it does not take. */
export function isUnknownOptionIssue(issue: z.core.$ZodIssue): boolean {
  return issue.code === 'custom' && issue.params?.['unknownOption'] === true;
}

/**
 * A `z.object` that refuses every key outside `shape` with its own issue, at the key's path,
 * saying which known key was meant when one is close (`is not an option (did you mean
 * budgetTokens?)`). The issue is raised even when a known field fails too (the API's
 * `budget_tokens` is named beside the missing `budgetTokens`), and it does not end a union's
 * search, so a union reports the branch the object was meant for.
 */
export function closedObject<Shape extends z.core.$ZodShape>(
  shape: Shape,
  listedIn?: string,
): z.ZodObject<Shape, z.core.$strict> {
  const known = Object.keys(shape);
  const schema = z.looseObject(shape).superRefine(
    (value, context) => {
      for (const key of Object.keys(value)) {
        if (Object.hasOwn(shape, key)) continue;
        context.addIssue({
          code: 'custom',
          path: [key],
          message: unknownOptionProblem({ key, known, ...(listedIn ? { listedIn } : {}) }),
          params: UNKNOWN_OPTION,
        });
      }
    },
    // Also when a known field failed: `budget_tokens` explains the missing `budgetTokens`.
    { when: (payload) => isObject(payload.value) },
  );
  // The unknown keys it lets through are always refused, so the parsed value has only `shape`.
  return schema as unknown as z.ZodObject<Shape, z.core.$strict>;
}
