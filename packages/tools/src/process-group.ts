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

/** Groups that {@link stopGroupAtExit} stops if the host process exits while they run. */
const groupsToStopAtExit = new Set<number>();

function stopGroupsAtExit(): void {
  for (const pid of groupsToStopAtExit) killProcessGroup(pid, 'SIGKILL');
}

/**
 * Kills the process group led by `pid` with SIGKILL if the host process exits first (a call
 * to `process.exit`, or a crash: Node emits `exit` after an uncaught exception too), so a
 * command started in its own group never outlives the process that waited for it. Only a
 * SIGKILL of the host itself escapes this. Returns the function that forgets the group, to
 * call once it has ended.
 */
export function stopGroupAtExit(pid: number): () => void {
  if (groupsToStopAtExit.size === 0) process.on('exit', stopGroupsAtExit);
  groupsToStopAtExit.add(pid);
  return () => {
    if (!groupsToStopAtExit.delete(pid)) return;
    if (groupsToStopAtExit.size === 0) process.off('exit', stopGroupsAtExit);
  };
}
