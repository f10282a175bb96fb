/** Runs `worker` over `items` with at most `concurrency` calls in flight; results keep input order. */
export async function mapWithConcurrency<Item, Result>(
  items: readonly Item[],
  concurrency: number,
  worker: (item: Item, index: number) => Promise<Result>,
): Promise<Result[]> {
  const results = new Array<Result>(items.length);
  let next = 0;
  const runners = Array.from(
    { length: Math.max(1, Math.min(concurrency, items.length)) },
    async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await worker(items[index] as Item, index);
      }
    },
  );
  await Promise.all(runners);
  return results;
}
