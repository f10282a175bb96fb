import { sha256Hex } from './hash.js';

/** Returns a deterministic random number generator (mulberry32) for a numeric or string seed. */
export function seededRandom(seed: number | string): () => number {
  let state = Number.parseInt(sha256Hex(String(seed)).slice(0, 8), 16) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}
