import { setMaxListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  countLinkedChildren,
  createChildAbortController,
  createFileStateCache,
  createRootToolUseContext,
  createSubagentContext,
  releaseChildAbortController,
  releaseSubagentContext,
  type LruFileStateCache,
} from '@delegate/context-isolation';
import { medianTime, type BenchResult } from './harness.js';

// `pnpm bench --quick` runs every scenario at a tiny size (CI checks that it runs, not its figures).
const QUICK = process.argv.includes('--quick');
const ENTRIES = QUICK ? 500 : 10_000;
const CHILDREN = QUICK ? 1_000 : 100_000;
// Children alive at the same time: Node's EventTarget scans its listener list on every
// add and remove, so n live listeners on one signal cost O(n²) to build; 10,000 keeps
// the phases that keep every child linked at once to a few seconds.
const LIVE_CHILDREN = QUICK ? 500 : 10_000;

// Measures retained heap, so it needs a full collection: `global.gc` when node runs with
// --expose-gc, otherwise the same function obtained through a V8 flag.
function getGc(): { gc: () => void; source: string } {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return { gc: exposed, source: 'global.gc (--expose-gc)' };
  setFlagsFromString('--expose-gc');
  return { gc: runInNewContext('gc') as () => void, source: 'v8.setFlagsFromString(--expose-gc)' };
}

async function settledHeap(gc: () => void): Promise<number> {
  // Let finalizers and pending tasks run, then collect twice so weak cells are cleared.
  for (let turn = 0; turn < 3; turn++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    gc();
  }
  return process.memoryUsage().heapUsed;
}

function filledCache(entries: number): LruFileStateCache {
  const cache = createFileStateCache({ maxEntries: entries, maxBytes: Number.POSITIVE_INFINITY });
  const content = 'export const value = 1;\n'.repeat(20);
  for (let index = 0; index < entries; index++) {
    cache.set(`/repo/src/module-${index}.ts`, { content, timestamp: index });
  }
  return cache;
}

/** What a straightforward deep clone does: rebuild a cache entry by entry with copied states. */
function naiveClone(cache: LruFileStateCache): LruFileStateCache {
  const copy = createFileStateCache({ maxEntries: cache.maxEntries, maxBytes: cache.maxBytes });
  for (const key of [...cache.keys()]) {
    const state = cache.get(key);
    if (state !== undefined) copy.set(key, { ...state });
  }
  return copy;
}

function microsecondsPerOperation(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function timeMicroseconds(fn: () => void): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e3;
}

async function cloneResults(): Promise<BenchResult[]> {
  const cache = filledCache(ENTRIES);
  const clonesPerRun = 1_000;
  const cowClone =
    ((await medianTime(
      () => {
        for (let index = 0; index < clonesPerRun; index++) cache.clone();
      },
      { runs: 7, warmup: 2 },
    )) *
      1e3) /
    clonesPerRun;
  const naive = (await medianTime(() => naiveClone(cache), { runs: 5, warmup: 1 })) * 1e3;

  const firstWrites: number[] = [];
  const secondWrites: number[] = [];
  const readsAfterClone: number[] = [];
  const naiveWrites: number[] = [];
  for (let index = 0; index < 200; index++) {
    const copy = cache.clone();
    readsAfterClone.push(timeMicroseconds(() => copy.get('/repo/src/module-17.ts')));
    firstWrites.push(
      timeMicroseconds(() => copy.set('/repo/src/new.ts', { content: 'new', timestamp: index })),
    );
    secondWrites.push(
      timeMicroseconds(() => copy.set('/repo/src/new-2.ts', { content: 'new', timestamp: index })),
    );
  }
  for (let index = 0; index < 20; index++) {
    const copy = naiveClone(cache);
    naiveWrites.push(
      timeMicroseconds(() => copy.set('/repo/src/new.ts', { content: 'new', timestamp: index })),
    );
  }
  const firstWrite = microsecondsPerOperation(firstWrites);

  // Heap held by 100 children that clone the cache and only read from it.
  const { gc, source } = getGc();
  const held: LruFileStateCache[] = [];
  const before = await settledHeap(gc);
  for (let index = 0; index < 100; index++) held.push(cache.clone());
  const cowHeld = (await settledHeap(gc)) - before;
  held.length = 0;
  const beforeNaive = await settledHeap(gc);
  for (let index = 0; index < 100; index++) held.push(naiveClone(cache));
  const naiveHeld = (await settledHeap(gc)) - beforeNaive;
  held.length = 0;

  return [
    {
      name: `context-isolation: clone a ${ENTRIES.toLocaleString('en')}-entry file cache`,
      metrics: {
        cloneMicroseconds: cowClone,
        naiveDeepCloneMicroseconds: naive,
        naiveToCloneRatio: naive / cowClone,
        readAfterCloneMicroseconds: microsecondsPerOperation(readsAfterClone),
        firstWriteAfterCloneMicroseconds: firstWrite,
        secondWriteAfterCloneMicroseconds: microsecondsPerOperation(secondWrites),
        naiveWriteAfterCloneMicroseconds: microsecondsPerOperation(naiveWrites),
        naiveToCloneAndFirstWriteRatio: naive / (cowClone + firstWrite),
      },
      notes: {
        entries: ENTRIES,
        contentBytesPerEntry: 'export const value = 1;\n'.length * 20,
        clone: 'copy on write: shares entries, the first write copies the key map once',
        naive: 'rebuild entry by entry with copied states',
      },
    },
    {
      name: 'context-isolation: heap held by 100 read-only clones of the cache',
      metrics: {
        cloneBytesTotal: cowHeld,
        naiveBytesTotal: naiveHeld,
        cloneBytesPerChild: cowHeld / 100,
        naiveBytesPerChild: naiveHeld / 100,
      },
      notes: { entries: ENTRIES, gc: source },
    },
  ];
}

async function childrenResults(): Promise<BenchResult[]> {
  const { gc, source } = getGc();

  // 1. Full sub-agent contexts of one parent, each writing once, then ended.
  const root = createRootToolUseContext({ cwd: '/repo', tools: [], model: 'model-a' });
  for (let index = 0; index < 100; index++) {
    root.readFileState.set(`/repo/f${index}.ts`, { content: 'x'.repeat(200), timestamp: index });
  }
  const contextsBefore = await settledHeap(gc);
  const contextsMs = await medianTime(
    () => {
      for (let index = 0; index < CHILDREN; index++) {
        const child = createSubagentContext(root, { agentType: 'worker' });
        child.readFileState.set('/repo/out.txt', { content: `result ${index}`, timestamp: index });
        if (index % 2 === 0) releaseSubagentContext(child);
        else child.abortController.abort('finished');
      }
    },
    { runs: 1, warmup: 0 },
  );
  const contextsAfter = await settledHeap(gc);

  // 2. Bare child controllers, released.
  const parent = new AbortController();
  const controllersBefore = await settledHeap(gc);
  for (let index = 0; index < CHILDREN; index++) {
    releaseChildAbortController(createChildAbortController(parent));
  }
  const controllersAfter = await settledHeap(gc);

  // 3. Child controllers neither released nor aborted, just dropped: the parent holds
  //    them weakly and a finalizer removes their listeners after collection.
  const dropParent = new AbortController();
  setMaxListeners(0, dropParent.signal);
  const droppedBefore = await settledHeap(gc);
  for (let index = 0; index < LIVE_CHILDREN; index++) createChildAbortController(dropParent);
  const droppedAfter = await settledHeap(gc);
  const droppedLinks = countLinkedChildren(dropParent);

  // 4. Naive linking for comparison: a listener that holds the child and is never removed.
  const naiveParent = new AbortController();
  setMaxListeners(0, naiveParent.signal);
  const naiveBefore = await settledHeap(gc);
  for (let index = 0; index < LIVE_CHILDREN; index++) {
    const child = new AbortController();
    naiveParent.signal.addEventListener('abort', () => child.abort(naiveParent.signal.reason));
    child.abort('finished');
  }
  const naiveAfter = await settledHeap(gc);

  return [
    {
      name: `context-isolation: heap held by ${CHILDREN.toLocaleString('en')} finished children of one parent`,
      metrics: {
        subagentContextsBytesPerChild: (contextsAfter - contextsBefore) / CHILDREN,
        subagentContextsMicrosecondsPerChild: (contextsMs * 1e3) / CHILDREN,
        releasedControllersBytesPerChild: (controllersAfter - controllersBefore) / CHILDREN,
        droppedControllersBytesPerChild: (droppedAfter - droppedBefore) / LIVE_CHILDREN,
        naiveControllersBytesPerChild: (naiveAfter - naiveBefore) / LIVE_CHILDREN,
        parentListenersAfterContexts: countLinkedChildren(root.abortController),
        parentListenersAfterDroppedChildren: droppedLinks,
      },
      notes: {
        children: CHILDREN,
        droppedAndNaiveChildren: LIVE_CHILDREN,
        gc: source,
        subagentContexts: 'createSubagentContext + one cache write; half released, half aborted',
        droppedControllers: 'never released nor aborted; cleaned up by a FinalizationRegistry',
        naiveControllers: 'addEventListener on the parent without removal',
      },
    },
  ];
}

/** Clone cost of the file cache and heap held by finished children. */
export default async function contextIsolationBench(): Promise<BenchResult[]> {
  return [...(await cloneResults()), ...(await childrenResults())];
}
