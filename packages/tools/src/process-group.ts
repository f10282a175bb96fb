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

/** Each running command's registration (its own object: a pid may be reused by the next one). */
const groupsToStopAtExit = new Set<{ readonly pid: number }>();

function stopGroupsAtExit(): void {
  for (const { pid } of groupsToStopAtExit) killProcessGroup(pid, 'SIGKILL');
}

/**
 * Kills the process group led by `pid` with SIGKILL if the host process exits first (a call
 * to `process.exit`, or an uncaught exception: Node emits `exit` after one too), so a command
 * started in its own group does not outlive the process that waited for it. A host ended by
 * a signal it does not handle (SIGKILL, say) runs no `exit` listener, so that still escapes.
 * Returns the function that forgets this registration, to call once the group has ended.
 */
export function stopGroupAtExit(pid: number): () => void {
  const registration = { pid };
  if (groupsToStopAtExit.size === 0) process.on('exit', stopGroupsAtExit);
  groupsToStopAtExit.add(registration);
  return () => {
    if (!groupsToStopAtExit.delete(registration)) return;
    if (groupsToStopAtExit.size === 0) process.off('exit', stopGroupsAtExit);
  };
}
