// Swaps a directory for a symbolic link to another directory and back, as fast as it can,
// until it is killed: the race that file tools must survive without leaving their root.
import { renameSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';

const [directory, target] = process.argv.slice(2);
const parked = `${directory}.parked`;
const cell = new Int32Array(new SharedArrayBuffer(4));
// Holds a state for 0-2 ms (a sleep, not a busy loop), so both states are met often.
const hold = (round) => Atomics.wait(cell, 0, 0, (round % 5) / 2);
for (let round = 0; ; round++) {
  try {
    renameSync(directory, parked);
    symlinkSync(target, directory);
    hold(round);
    unlinkSync(directory);
  } catch {
    // A tool may have made a fresh folder in its place; it is inside the root, remove it.
    rmSync(directory, { recursive: true, force: true });
  }
  try {
    renameSync(parked, directory);
  } catch {
    rmSync(directory, { recursive: true, force: true });
    try {
      renameSync(parked, directory);
    } catch {
      // The parked folder is gone only if the test is cleaning up.
    }
  }
  hold(round + 2);
}
