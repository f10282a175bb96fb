import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HeadTailBuffer } from './head-tail-buffer.js';

describe('HeadTailBuffer', () => {
  it('keeps everything under the cap', () => {
    const buffer = new HeadTailBuffer(100);
    buffer.write(Buffer.from('hello '));
    buffer.write(Buffer.from('world'));
    expect(buffer.toString()).toBe('hello world');
    expect(buffer.cutBytes).toBe(0);
  });

  it('keeps the first and last halves of any chunking and counts the cut (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z]{0,40}$/), { maxLength: 30 }),
        fc.integer({ min: 2, max: 120 }),
        (chunks, maxBytes) => {
          const buffer = new HeadTailBuffer(maxBytes);
          for (const chunk of chunks) buffer.write(Buffer.from(chunk));
          const whole = chunks.join('');
          if (whole.length <= maxBytes) {
            expect(buffer.toString()).toBe(whole);
            return;
          }
          const head = whole.slice(0, Math.ceil(maxBytes / 2));
          const tail = whole.slice(whole.length - Math.floor(maxBytes / 2));
          const cut = whole.length - head.length - tail.length;
          expect(buffer.cutBytes).toBe(cut);
          expect(buffer.toString()).toBe(
            `${head}\n\n[… ${cut} bytes of output cut from the middle …]\n\n${tail}`,
          );
        },
      ),
    );
  });
});
