import Anthropic from '@anthropic-ai/sdk';
import { startSim } from '@delegate/api-sim';
import type { Bench, BenchResult } from './harness.js';

// Requests per second through the real SDK against the simulator with zero pacing, for a
// 1,000-token answer (4,000 bytes of text), streamed and not streamed, measured side by side.
const ANSWER = 'The simulator answers quickly. '.repeat(130).slice(0, 4000);
const CONCURRENCY = 8;

/** How long each mode is measured, and how many requests warm up first (`--quick`: tiny). */
type Duration = { measureMs: number; warmup: number };
const FULL: Duration = { measureMs: 4000, warmup: 20 };
const QUICK: Duration = { measureMs: 300, warmup: 2 };

async function measure(
  client: Anthropic,
  options: { stream: boolean; duration: Duration },
): Promise<{ requests: number; seconds: number; outputTokens: number }> {
  const { stream, duration } = options;
  const params = {
    model: 'claude-sonnet-5',
    max_tokens: 2000,
    messages: [{ role: 'user' as const, content: 'Write the benchmark answer.' }],
  };
  let requests = 0;
  let outputTokens = 0;
  const one = async () => {
    const message = stream
      ? await client.messages.stream(params).finalMessage()
      : await client.messages.create(params);
    outputTokens = message.usage.output_tokens;
    requests += 1;
  };
  for (let index = 0; index < duration.warmup; index++) await one();
  requests = 0;
  const start = performance.now();
  const deadline = start + duration.measureMs;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) await one();
    }),
  );
  return { requests, seconds: (performance.now() - start) / 1000, outputTokens };
}

const bench = async (options: { quick?: boolean } = {}): ReturnType<Bench> => {
  const duration = options.quick ? QUICK : FULL;
  const sim = await startSim({ policy: () => ANSWER });
  const client = new Anthropic({ apiKey: 'bench', baseURL: sim.url, maxRetries: 0 });
  const results: BenchResult[] = [];
  try {
    for (const stream of [true, false]) {
      const run = await measure(client, { stream, duration });
      results.push({
        name: `api-sim: 1,000-token answer via the SDK, ${stream ? 'streamed' : 'not streamed'}, zero pacing`,
        metrics: {
          requestsPerSecond: Math.round((run.requests / run.seconds) * 10) / 10,
          msPerRequest: Math.round(((run.seconds * 1000 * CONCURRENCY) / run.requests) * 100) / 100,
        },
        notes: {
          concurrency: CONCURRENCY,
          outputTokens: run.outputTokens,
          requests: run.requests,
          measuredMs: duration.measureMs,
        },
      });
    }
  } finally {
    await sim.close();
  }
  return results;
};

export default bench;
