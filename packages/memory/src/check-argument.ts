// The argument checks the memory functions use: the ones every package shares, from @delegate/core.
export {
  checkArray,
  checkObject,
  checkOptionalArray,
  checkOptionalObject,
  checkString,
} from '@delegate/core';
