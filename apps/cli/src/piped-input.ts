import { fstatSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

/** How long a prompt given as an argument waits for piped stdin to start (as `claude -p` does). */
export const PIPED_INPUT_WAIT_MS = 3_000;

/** What stdin is: a terminal, something that ends (a pipe, a file, a socket), or neither. */
export type InputKind = 'terminal' | 'pipe' | 'file' | 'other';

/** What kind of input `stdin` is (a stream without a descriptor counts as a pipe). */
export function inputKind(stdin: NodeJS.ReadStream): InputKind {
  if (stdin.isTTY === true) return 'terminal';
  const fd = (stdin as { fd?: unknown }).fd;
  if (typeof fd !== 'number') return 'pipe';
  try {
    const stats = fstatSync(fd);
    if (stats.isFile()) return 'file';
    if (stats.isFIFO() || stats.isSocket()) return 'pipe';
    // A device (`< /dev/null`, `< /dev/zero`) is not text someone piped in.
    return 'other';
  } catch {
    // No stdin at all (a closed descriptor).
    return 'other';
  }
}

/** Reads `stdin` to its end, as UTF-8 text with surrounding white space trimmed. */
export async function readAllInput(stdin: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8').trim();
}

/**
 * The text piped in beside a prompt argument. A file is read to its end; a pipe or socket is
 * read to its end once it has given something (or ended) within `waitMs`, and otherwise left
 * alone (`waited: true`): a parent that keeps stdin open without writing (CI, a supervisor)
 * must not hold the run. A terminal or a device is not read.
 */
export async function readInputBesidePrompt(
  stdin: NodeJS.ReadStream,
  waitMs: number = PIPED_INPUT_WAIT_MS,
): Promise<{ text: string; waited: boolean }> {
  const kind = inputKind(stdin);
  if (kind === 'file') return { text: await readAllInput(stdin), waited: false };
  if (kind !== 'pipe') return { text: '', waited: false };
  const chunks: Buffer[] = [];
  const iterator = stdin[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const timer = new AbortController();
  const pending = iterator.next();
  const first = await Promise.race([
    pending,
    delay(waitMs, 'waited' as const, { signal: timer.signal }).catch(() => 'cancelled' as const),
  ]);
  timer.abort();
  if (first === 'waited' || first === 'cancelled') {
    // Stops reading, so the process can exit while stdin stays open.
    pending.catch(() => undefined);
    stdin.destroy();
    return { text: '', waited: true };
  }
  for (let next = first; next.done !== true; next = await iterator.next()) {
    const chunk = next.value;
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }
  return { text: Buffer.concat(chunks).toString('utf8').trim(), waited: false };
}

/** The message a run gets from a prompt argument and the text piped in beside it. */
export function joinPromptAndInput(prompt: string, input: string): string {
  return input === '' ? prompt : `${prompt}\n\n${input}`;
}
