import { readFileSync } from 'node:fs';

/**
 * True while a process exists and is not a zombie. A killed grandchild is reparented
 * to PID 1, which in some containers never reaps it, so `process.kill(pid, 0)` alone
 * would keep reporting it.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Polls until `predicate` holds or `timeoutMs` passes; returns whether it held. */
export async function waitUntil(predicate: () => boolean | Promise<boolean>, timeoutMs = 3000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return predicate();
}
