import { invalidArgument, isObject } from '@delegate/core';
import { describeCacheReach } from './describe-cache-reach.js';
import { type CacheBreakDiagnosis } from './diagnose-cache-break.js';

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** Writes a diagnosis as one line for a debug log. */
export function formatCacheBreak(diagnosis: CacheBreakDiagnosis): string {
  if (
    !isObject(diagnosis) ||
    (diagnosis.identical !== true &&
      (!isObject(diagnosis.firstDifference) || !isObject(diagnosis.reach)))
  ) {
    throw invalidArgument({
      where: 'formatCacheBreak()',
      option: 'diagnosis',
      expected: 'a diagnosis from diagnoseCacheBreak',
      value: diagnosis,
    });
  }
  if (diagnosis.identical) {
    return `cache key identical: every part matches (${plural(diagnosis.sharedPrefixMessages, 'message')})`;
  }
  const { part, detail } = diagnosis.firstDifference;
  if (diagnosis.longerRequest !== undefined) {
    const shorter = diagnosis.longerRequest === 'a' ? 'b' : 'a';
    const line = `no cache break: request ${diagnosis.longerRequest} extends request ${shorter}, whose whole prompt it shares (${plural(diagnosis.sharedPrefixMessages, 'leading message')} identical); first extra content: ${detail}`;
    return line.replace(/\s*[\r\n]+\s*/g, ' ');
  }
  // A content break can come on top of a shared prefix that is not read either.
  const unread =
    part === 'lookback' || part === 'breakpoints' ? undefined : describeCacheReach(diagnosis.reach);
  const also =
    unread === undefined || diagnosis.reach.problem === 'no-entry' ? '' : `; before it, ${unread}`;
  const line = `cache break in ${part}: ${detail}; ${plural(diagnosis.sharedPrefixMessages, 'leading message')} still shared${also}`;
  // Details can quote model names or field names; keep the log entry on one line.
  return line.replace(/\s*[\r\n]+\s*/g, ' ');
}
