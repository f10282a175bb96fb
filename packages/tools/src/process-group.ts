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

/** How often a group being terminated is checked for leftovers. */
const GROUP_CHECK_INTERVAL_MS = 50;

/**
 * Sends SIGTERM to the process group led by `pid`, then SIGKILL to whatever of it is left
 * after `graceMs`. The group is checked every 50 ms and the wait ends as soon as it is empty,
 * so no timer keeps the host running for the grace period and no later group that reuses the
 * id is signalled; while it waits, the group is killed if the host exits first. Returns false
 * when the group was already gone.
 */
export function terminateProcessGroup(pid: number, graceMs: number): boolean {
  if (!killProcessGroup(pid, 'SIGTERM')) return false;
  const forget = stopGroupAtExit(pid);
  const deadline = Date.now() + graceMs;
  const check = setInterval(() => {
    if (!isProcessGroupAlive(pid)) {
      clearInterval(check);
      forget();
    } else if (Date.now() >= deadline) {
      clearInterval(check);
      killProcessGroup(pid, 'SIGKILL');
      forget();
    }
  }, GROUP_CHECK_INTERVAL_MS).unref();
  return true;
}
