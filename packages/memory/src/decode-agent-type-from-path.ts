import { checkString } from '@delegate/core';
import { sanitizeAgentTypeForPath } from './sanitize-agent-type-for-path.js';
import { decodeWtf8 } from './wtf8.js';

/**
 * Turns a memory folder name back into its agent type, or returns undefined when the
 * name was not produced by `sanitizeAgentTypeForPath` (hand-made folders) or was cut to
 * length (those end in `~` and a hash and cannot be reversed).
 */
export function decodeAgentTypeFromPath(folderName: string): string | undefined {
  checkString('decodeAgentTypeFromPath()', 'folderName', folderName);
  if (folderName.length === 0) return undefined;
  const bytes: number[] = [];
  for (let index = 0; index < folderName.length; index++) {
    const character = folderName.charCodeAt(index);
    if (character === 0x25 /* % */) {
      const hex = folderName.slice(index + 1, index + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) return undefined;
      bytes.push(Number.parseInt(hex, 16));
      index += 2;
    } else if (character < 0x80) {
      bytes.push(character);
    } else {
      return undefined;
    }
  }
  const agentType = decodeWtf8(bytes);
  if (agentType === undefined || agentType.length === 0) return undefined;
  // Only the canonical spelling counts: this rejects `Foo`, `%61`, cut names and the like.
  return sanitizeAgentTypeForPath(agentType) === folderName ? agentType : undefined;
}
