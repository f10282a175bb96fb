import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  AppState,
  FileState,
  FileStateCache,
  SetAppState,
  ToolCallExtras,
  ToolResult,
  ToolUseContext,
} from '@delegate/core';

/** A Map-backed file-read cache whose clones are independent. */
export class MapFileStateCache implements FileStateCache {
  private readonly entries: Map<string, FileState>;

  constructor(entries?: Iterable<[string, FileState]>) {
    this.entries = new Map(entries);
  }

  get(path: string): FileState | undefined {
    return this.entries.get(path);
  }

  set(path: string, state: FileState): this {
    this.entries.set(path, state);
    return this;
  }

  has(path: string): boolean {
    return this.entries.has(path);
  }

  delete(path: string): boolean {
    return this.entries.delete(path);
  }

  clear(): void {
    this.entries.clear();
  }

  clone(): FileStateCache {
    return new MapFileStateCache([...this.entries].map(([key, value]) => [key, { ...value }]));
  }

  keys(): IterableIterator<string> {
    return this.entries.keys();
  }

  get size(): number {
    return this.entries.size;
  }
}

/** An in-memory application-state store, like the root store of a host. */
export type AppStateStore = {
  getAppState: () => AppState;
  setAppState: SetAppState;
};

/** Creates an in-memory app-state store. */
export function createAppStateStore(additionalWorkingDirectories: string[] = []): AppStateStore {
  let state: AppState = {
    toolPermissionContext: {
      mode: 'default',
      allowRules: [],
      denyRules: [],
      askRules: [],
      additionalWorkingDirectories,
    },
    tasks: {},
    mcp: { clients: [], tools: [] },
  };
  return {
    getAppState: () => state,
    setAppState: (update) => {
      state = update(state);
    },
  };
}

/** Builds a ToolUseContext for tests, rooted at `cwd`. */
export function createTestContext(
  options: {
    cwd: string;
    additionalWorkingDirectories?: string[];
    store?: AppStateStore;
    abortController?: AbortController;
    /** When true, `setAppState` is a no-op and only `setAppStateForTasks` reaches the store (a sub-agent). */
    isolated?: boolean;
  },
): ToolUseContext {
  const store = options.store ?? createAppStateStore(options.additionalWorkingDirectories ?? []);
  return {
    options: { tools: [], model: 'test-model' },
    messages: [],
    cwd: options.cwd,
    readFileState: new MapFileStateCache(),
    abortController: options.abortController ?? new AbortController(),
    getAppState: store.getAppState,
    setAppState: options.isolated ? () => {} : store.setAppState,
    setAppStateForTasks: store.setAppState,
  };
}

/** Extras for a tool call in tests. */
export const testExtras: ToolCallExtras = { toolUseId: 'toolu_test' };

/** Creates a temp directory (real path, so symlinked tmp dirs compare equal). */
export async function createTempDirectory(prefix = 'delegate-tools-'): Promise<string> {
  return realpath(await mkdtemp(join(tmpdir(), prefix)));
}

/** Removes a temp directory. */
export async function removeTempDirectory(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true });
}

/** The text of a tool result's content, whether a string or text blocks. */
export function contentText(result: ToolResult): string {
  return typeof result.content === 'string' ? result.content : result.content.map((block) => block.text).join('\n');
}
