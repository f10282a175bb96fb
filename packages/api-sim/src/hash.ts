import { createHash } from 'node:crypto';

/** Returns the SHA-256 of the given parts (joined by a NUL byte) as lowercase hex. */
export function sha256Hex(...parts: string[]): string {
  const hash = createHash('sha256');
  parts.forEach((part, index) => {
    if (index > 0) hash.update('\u0000');
    hash.update(part);
  });
  return hash.digest('hex');
}
