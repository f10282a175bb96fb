/** Sends `signal` to the whole process group led by `pid`; returns false when the group is gone. */
export function killProcessGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** True while any process of the group led by `pid` still exists. */
export function isProcessGroupAlive(pid: number): boolean {
  return killProcessGroup(pid, 0 as unknown as NodeJS.Signals);
}
