import { mkdir, open, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { RunStore, TranscriptChunk } from '../store/run-store.js';

/** Largest piece read and stored at once, in bytes. */
const MAX_CHUNK = 4 * 1024 * 1024;

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch {
    return undefined;
  }
}

/** Whole lines of `path` from byte `offset` on (a line still being written is left out). */
async function readLinesFrom(path: string, offset: number): Promise<Buffer | undefined> {
  const size = await sizeOf(path);
  if (size === undefined || size <= offset) return undefined;
  const handle = await open(path, 'r');
  try {
    const length = Math.min(size - offset, MAX_CHUNK);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read({ buffer, position: offset, length });
    const end = buffer.subarray(0, bytesRead).lastIndexOf(0x0a);
    return end === -1 ? undefined : buffer.subarray(0, end + 1);
  } finally {
    await handle.close();
  }
}

/**
 * Copies a run's transcript files into the store as they grow, and writes them back from
 * the store before a turn, so that whichever worker runs the next turn (or takes the run
 * over from a worker that died) resumes every agent from its last stored turn. JSONL files
 * are stored by appended pieces of whole lines; agent metadata files are stored whole.
 * Writes of one run never overlap, so pieces arrive in order.
 */
export class TranscriptSync {
  private readonly store: RunStore;
  private readonly runId: string;
  private readonly directory: string;
  private readonly sessionId: string;
  /** Bytes of each JSONL file already in the store. */
  private readonly stored = new Map<string, number>();
  /** Content of each metadata file as stored. */
  private readonly storedWhole = new Map<string, string>();
  private running: Promise<void> | undefined;
  private again = false;

  constructor(options: { store: RunStore; runId: string; directory: string; sessionId: string }) {
    this.store = options.store;
    this.runId = options.runId;
    this.directory = options.directory;
    this.sessionId = options.sessionId;
  }

  /**
   * Makes the local files match the store (the store wins: what a worker wrote after its
   * last stored turn is not part of the run). Files the store does not have are left alone
   * and are stored whole by the next `sync`.
   */
  async restore(): Promise<void> {
    const chunks = await this.store.listTranscriptChunks(this.runId);
    const files = new Map<string, TranscriptChunk[]>();
    for (const chunk of chunks) {
      const list = files.get(chunk.file) ?? [];
      list.push(chunk);
      files.set(chunk.file, list);
    }
    for (const [file, pieces] of files) {
      const path = this.pathOf(file);
      if (!path) continue;
      const content = pieces.map((piece) => piece.content).join('');
      if (file.endsWith('.jsonl')) {
        const bytes = Buffer.byteLength(content);
        this.stored.set(file, bytes);
        const local = await readFile(path).catch(() => undefined);
        if (local && local.length === bytes && local.toString('utf8') === content) continue;
      } else {
        this.storedWhole.set(file, content);
      }
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, content, 'utf8');
    }
  }

  /** Stores what changed since the last call; calls made while one runs are folded into one more. */
  sync(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.syncOnce();
      } while (this.again);
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private pathOf(file: string): string | undefined {
    // Only files of this run's session, named as the runtime names them.
    const main = `${this.sessionId}.jsonl`;
    const agent = new RegExp(
      `^${this.sessionId}/agents/[A-Za-z0-9][A-Za-z0-9_-]{0,127}\\.(jsonl|meta\\.json)$`,
    );
    return file === main || agent.test(file) ? join(this.directory, file) : undefined;
  }

  private async localFiles(): Promise<string[]> {
    const files = [`${this.sessionId}.jsonl`];
    const names = await readdir(join(this.directory, this.sessionId, 'agents')).catch(
      () => [] as string[],
    );
    for (const name of names.sort())
      if (name.endsWith('.jsonl') || name.endsWith('.meta.json'))
        files.push(`${this.sessionId}/agents/${name}`);
    return files;
  }

  private async syncOnce(): Promise<void> {
    const chunks: TranscriptChunk[] = [];
    const advanced: [string, number][] = [];
    const wholes: [string, string][] = [];
    for (const file of await this.localFiles()) {
      const path = join(this.directory, file);
      if (file.endsWith('.jsonl')) {
        const offset = this.stored.get(file) ?? 0;
        const lines = await readLinesFrom(path, offset);
        if (!lines) continue;
        chunks.push({ runId: this.runId, file, offset, content: lines.toString('utf8') });
        advanced.push([file, offset + lines.length]);
      } else {
        const content = await readFile(path, 'utf8').catch(() => undefined);
        if (content === undefined || content === this.storedWhole.get(file)) continue;
        chunks.push({ runId: this.runId, file, offset: 0, content });
        wholes.push([file, content]);
      }
    }
    if (chunks.length === 0) return;
    await this.store.saveTranscriptChunks(chunks);
    for (const [file, offset] of advanced) this.stored.set(file, offset);
    for (const [file, content] of wholes) this.storedWhole.set(file, content);
  }
}
