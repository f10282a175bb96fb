import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { echo } from './echo.js';
import { rules } from './rules.js';
import { script } from './script.js';
import { startSim, type Sim, type SimOptions } from './start-sim.js';

const MODEL = 'claude-sonnet-5';
let sim: Sim | undefined;

async function open(options: SimOptions, maxRetries = 0): Promise<{ sim: Sim; client: Anthropic }> {
  sim = await startSim(options);
  return { sim, client: new Anthropic({ apiKey: 'test', baseURL: sim.url, maxRetries }) };
}

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

function textOf(message: Anthropic.Message): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

const tools = [
  {
    name: 'Read',
    description: 'Read a file',
    input_schema: { type: 'object' as const, properties: {} },
  },
];

describe('policies', () => {
  it('script: parallel conversations each follow their own copy of the script', async () => {
    const { client } = await open({
      policy: script([
        (request) => [
          { type: 'tool_use', name: 'Read', input: { path: `${request.lastUserText}.txt` } },
        ],
        (request) => `done with ${request.toolResults[0]?.content}`,
      ]),
    });
    const run = async (name: string) => {
      const first = await client.messages.create({
        model: MODEL,
        max_tokens: 200,
        tools,
        messages: [{ role: 'user', content: name }],
      });
      const call = first.content[0];
      if (call?.type !== 'tool_use') throw new Error('expected a tool call');
      const second = await client.messages.create({
        model: MODEL,
        max_tokens: 200,
        tools,
        messages: [
          { role: 'user', content: name },
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: call.id,
                content: `contents of ${JSON.stringify(call.input)}`,
              },
            ],
          },
        ],
      });
      return textOf(second);
    };
    const [alpha, beta] = await Promise.all([run('alpha'), run('beta')]);
    expect(alpha).toBe('done with contents of {"path":"alpha.txt"}');
    expect(beta).toBe('done with contents of {"path":"beta.txt"}');
  });

  it('script: past the end answers a non-retryable 500 that names the turn', async () => {
    const { client, sim } = await open({ policy: script(['only turn']) }, 2);
    const error = await client.messages
      .create({
        model: MODEL,
        max_tokens: 50,
        messages: [
          { role: 'user', content: 'one' },
          { role: 'assistant', content: 'only turn' },
          { role: 'user', content: 'two' },
        ],
      })
      .catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
    expect((error as InstanceType<typeof Anthropic.APIError>).apiMessage).toMatch(
      /has 1 turns .* turn 2/,
    );
    expect(sim.journal.entries).toHaveLength(1);
  });

  it('rules: the first matching rule wins, and the fallback answers the rest', async () => {
    const { client } = await open({
      policy: rules(
        [
          { match: { lastUserText: /weather/i }, reply: 'sunny' },
          { match: { lastUserText: 'weather in' }, reply: 'never reached' },
          { match: { system: 'pirate' }, reply: 'arr' },
        ],
        { fallback: echo },
      ),
    });
    const ask = (content: string, system?: string) =>
      client.messages.create({
        model: MODEL,
        max_tokens: 50,
        ...(system ? { system } : {}),
        messages: [{ role: 'user', content }],
      });
    expect(textOf(await ask('What is the weather in Oslo?'))).toBe('sunny');
    expect(textOf(await ask('hello', 'You are a pirate.'))).toBe('arr');
    expect(textOf(await ask('repeat me'))).toBe('repeat me');
  });

  it('rules: matches the fork directive in the last text block, by default after "Your directive:" or in a tag', async () => {
    const { client } = await open({
      policy: rules([
        {
          match: { forkDirective: 'parser' },
          reply: (request) => `fork on: ${request.forkDirective}`,
        },
        { match: { forkDirective: true }, reply: 'some other fork' },
        { match: {}, reply: 'main thread' },
      ]),
    });
    const ask = (text: string) =>
      client.messages.create({
        model: MODEL,
        max_tokens: 50,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'context' },
              { type: 'text', text },
            ],
          },
        ],
      });
    expect(
      textOf(await ask('<rules>stay in scope</rules>\n\nYour directive: audit the parser')),
    ).toBe('fork on: audit the parser');
    expect(textOf(await ask('<fork-directive>check the printer</fork-directive>'))).toBe(
      'some other fork',
    );
    expect(textOf(await ask('just a question'))).toBe('main thread');
  });

  it('rules: a custom fork directive matcher replaces the default', async () => {
    const { client } = await open({
      forkDirective: (text) => /^TASK=(.*)$/m.exec(text)?.[1],
      policy: rules(
        [{ match: { forkDirective: true }, reply: (request) => `task ${request.forkDirective}` }],
        { fallback: 'none' },
      ),
    });
    const ask = (content: string) =>
      client.messages.create({
        model: MODEL,
        max_tokens: 50,
        messages: [{ role: 'user', content }],
      });
    expect(textOf(await ask('TASK=lint'))).toBe('task lint');
    expect(textOf(await ask('Directive: ignored now'))).toBe('none');
  });

  it('rules: matches the agent header and the turn', async () => {
    const { client } = await open({
      policy: rules(
        [
          { match: { agent: 'Explore', turn: 0 }, reply: 'exploring' },
          { match: { agent: 'Explore' }, reply: 'still exploring' },
        ],
        { fallback: 'main' },
      ),
    });
    const explore = client.withOptions({ defaultHeaders: { 'x-delegate-agent': 'Explore' } });
    expect(
      textOf(
        await explore.messages.create({
          model: MODEL,
          max_tokens: 50,
          messages: [{ role: 'user', content: 'go' }],
        }),
      ),
    ).toBe('exploring');
    const later = await explore.messages.create({
      model: MODEL,
      max_tokens: 50,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: 'exploring' },
        { role: 'user', content: 'more' },
      ],
    });
    expect(textOf(later)).toBe('still exploring');
    expect(
      textOf(
        await client.messages.create({
          model: MODEL,
          max_tokens: 50,
          messages: [{ role: 'user', content: 'go' }],
        }),
      ),
    ).toBe('main');
  });

  it('rules: without a fallback an unmatched request fails clearly and is not retried', async () => {
    const { client, sim } = await open(
      { policy: rules([{ match: { lastUserText: 'x' }, reply: 'y' }]) },
      2,
    );
    const error = await client.messages
      .create({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'nothing' }] })
      .catch((failure: unknown) => failure);
    expect((error as InstanceType<typeof Anthropic.APIError>).apiMessage).toMatch(
      /no rule matched .*"nothing"/,
    );
    expect(sim.journal.entries).toHaveLength(1);
  });

  it('echo: answers with the last user text', async () => {
    const { client } = await open({});
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 50,
      messages: [{ role: 'user', content: 'ping back' }],
    });
    expect(textOf(message)).toBe('ping back');
  });
});
