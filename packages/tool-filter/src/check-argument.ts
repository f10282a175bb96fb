import { checkObject, checkString, invalidArgument } from '@delegate/core';

// The checks every package shares come from @delegate/core; those below are this package's own.
export {
  checkArray,
  checkObject,
  checkOptionalArray,
  checkOptionalObject,
  checkString,
} from '@delegate/core';

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
