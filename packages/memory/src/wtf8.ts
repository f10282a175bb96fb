/**
 * Encodes a string as WTF-8: UTF-8, except that a lone surrogate (which UTF-8 cannot
 * represent) is written as its own 3-byte sequence instead of being replaced by U+FFFD.
 * Two different strings therefore never produce the same bytes.
 */
export function encodeWtf8(text: string): number[] {
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index++) {
    let codePoint = text.charCodeAt(index);
    if (codePoint >= 0xd800 && codePoint <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        codePoint = 0x10000 + ((codePoint - 0xd800) << 10) + (next - 0xdc00);
        index++;
      }
    }
    if (codePoint < 0x80) {
      bytes.push(codePoint);
    } else if (codePoint < 0x800) {
      bytes.push(0xc0 | (codePoint >> 6), 0x80 | (codePoint & 0x3f));
    } else if (codePoint < 0x10000) {
      bytes.push(
        0xe0 | (codePoint >> 12),
        0x80 | ((codePoint >> 6) & 0x3f),
        0x80 | (codePoint & 0x3f),
      );
    } else {
      bytes.push(
        0xf0 | (codePoint >> 18),
        0x80 | ((codePoint >> 12) & 0x3f),
        0x80 | ((codePoint >> 6) & 0x3f),
        0x80 | (codePoint & 0x3f),
      );
    }
  }
  return bytes;
}

/**
 * Decodes WTF-8 bytes back to a string; returns undefined for malformed input.
 * Overlong forms are not rejected here: callers check that re-encoding gives the same
 * bytes, which rejects every non-canonical form at once.
 */
export function decodeWtf8(bytes: readonly number[]): string | undefined {
  let text = '';
  let index = 0;
  while (index < bytes.length) {
    const lead = bytes[index] ?? 0;
    let length: number;
    let codePoint: number;
    if (lead < 0x80) {
      length = 1;
      codePoint = lead;
    } else if (lead >= 0xc0 && lead < 0xe0) {
      length = 2;
      codePoint = lead & 0x1f;
    } else if (lead >= 0xe0 && lead < 0xf0) {
      length = 3;
      codePoint = lead & 0x0f;
    } else if (lead >= 0xf0 && lead < 0xf8) {
      length = 4;
      codePoint = lead & 0x07;
    } else {
      return undefined;
    }
    if (index + length > bytes.length) return undefined;
    for (let offset = 1; offset < length; offset++) {
      const continuation = bytes[index + offset] ?? 0;
      if ((continuation & 0xc0) !== 0x80) return undefined;
      codePoint = (codePoint << 6) | (continuation & 0x3f);
    }
    if (codePoint > 0x10ffff) return undefined;
    text += String.fromCodePoint(codePoint);
    index += length;
  }
  return text;
}
