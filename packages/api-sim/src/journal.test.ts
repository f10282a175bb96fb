import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type Sim } from './start-sim.js';

const MODEL = 'claude-sonnet-5';
let sim: Sim;
let client: Anthropic;

beforeAll(async () => {
  sim = await startSim({ policy: () => 'ok' });
  client = new Anthropic({ apiKey: 'secret-key', baseURL: sim.url, maxRetries: 0 });
  const base = {
    model: MODEL,
    max_tokens: 20,
    system: 'sys',
    tools: [{ name: 'Read', input_schema: { type: 'object' as const, properties: {} } }],
  };
  await client.messages.create({ ...base, messages: [{ role: 'user', content: 'first' }] });
  await client.messages.create({
    ...base,
    messages: [
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'second' },
    ],
  });
  await client.messages
    .stream({ ...base, system: 'other', messages: [{ role: 'user', content: 'first' }] })
    .finalMessage();
});

afterAll(async () => {
  await sim.close();
});

describe('journal', () => {
  it('records each request with its body, model, stream flag, status and usage', () => {
    const entries = sim.journal.entries;
    expect(entries.map((entry) => entry.index)).toEqual([1, 2, 3]);
    expect(entries.map((entry) => entry.stream)).toEqual([false, false, true]);
    expect(
      entries.every(
        (entry) => entry.model === MODEL && entry.status === 200 && entry.path === '/v1/messages',
      ),
    ).toBe(true);
    expect(entries[1]?.usage?.input_tokens).toBeGreaterThan(
      entries[0]?.usage?.input_tokens ?? Infinity,
    );
    expect((entries[0]?.body as { messages: unknown[] }).messages).toHaveLength(1);
    expect(sim.journal.last()?.stopReason).toBe('end_turn');
  });

  it('fingerprints tools, system and each message so requests can be compared part by part', () => {
    const [first, second, third] = sim.journal.entries;
    expect(second?.fingerprint?.tools).toBe(first?.fingerprint?.tools);
    expect(second?.fingerprint?.system).toBe(first?.fingerprint?.system);
    expect(second?.fingerprint?.messages[0]).toBe(first?.fingerprint?.messages[0]);
    expect(second?.fingerprint?.messages).toHaveLength(3);
    expect(third?.fingerprint?.system).not.toBe(first?.fingerprint?.system);
    expect(third?.fingerprint?.messages[0]).toBe(first?.fingerprint?.messages[0]);
    expect(third?.fingerprint?.prefix).not.toBe(first?.fingerprint?.prefix);
  });

  it('filters entries and keeps conversation keys per system and first message', () => {
    expect(sim.journal.filter((entry) => entry.stream)).toHaveLength(1);
    const [first, second, third] = sim.journal.entries;
    expect(second?.conversationKey).toBe(first?.conversationKey);
    expect(third?.conversationKey).not.toBe(first?.conversationKey);
    expect(second?.turnIndex).toBe(1);
  });

  it('dumps JSON Lines without the API key', () => {
    const jsonl = sim.journal.toJSONL();
    const lines = jsonl.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines.map((line) => (JSON.parse(line) as { index: number }).index)).toEqual([1, 2, 3]);
    expect(jsonl).not.toContain('secret-key');
    const path = join(mkdtempSync(join(tmpdir(), 'api-sim-')), 'journal.jsonl');
    sim.journal.dump(path);
    expect(readFileSync(path, 'utf8')).toBe(jsonl);
  });
});
