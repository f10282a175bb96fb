/** A source of the current time in milliseconds, injectable so tests can move time. */
export type Clock = { now(): number };

/** A clock that only moves when told to, for TTL tests. */
export type ManualClock = Clock & {
  /** Moves the clock forward by `milliseconds`. */
  advance(milliseconds: number): void;
  /** Sets the clock to an absolute time in milliseconds. */
  set(milliseconds: number): void;
};

/** Creates a clock that starts at `start` milliseconds and moves only through `advance`/`set`. */
export function createManualClock(start = 0): ManualClock {
  let current = start;
  return {
    now: () => current,
    advance: (milliseconds) => {
      current += milliseconds;
    },
    set: (milliseconds) => {
      current = milliseconds;
    },
  };
}
