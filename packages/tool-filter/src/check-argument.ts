import { checkObject, checkString, invalidArgument } from '@delegate/core';

// Checks of this package's own; the shared ones (checkObject, checkArray, …) are @delegate/core's.

/** Throws `INVALID_ARGUMENT` unless `tool` is an object with a string `name`. */
export function checkTool(where: string, option: string, tool: unknown): void {
  checkObject(where, option, tool);
  checkString(where, `${option}.name`, (tool as { name?: unknown }).name);
}

/** Throws `INVALID_ARGUMENT` unless `value` is a `Set` of names. */
export function checkNameSet(where: string, option: string, value: unknown): void {
  if (!(value instanceof Set)) {
    throw invalidArgument({ where, option, expected: 'a Set of tool names', value });
  }
}
