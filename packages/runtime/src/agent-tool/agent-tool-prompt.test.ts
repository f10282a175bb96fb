import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { getBuiltInAgents } from '@delegate/agent-defs';
import { customAgent, requestBody } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('the agent list', () => {
  const definitionsWith = (extra: string[]) => {
    const agents = [
      ...getBuiltInAgents(),
      ...extra.map((name) =>
        customAgent(
          `---\nname: ${name}\ndescription: Does ${name} work\n---\nYou do ${name} work.`,
        ),
      ),
    ];
    return { activeAgents: agents, allAgents: agents };
  };

  it('goes into a <system-reminder> by default, so a new agent leaves the tools block unchanged', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'ok' }) });
    const { session, sim } = current;
    await session.send('first');
    session.context.options.agentDefinitions = definitionsWith(['translator']);
    session.runtime.getAgentDefinitions = () => session.context.options.agentDefinitions!;
    await session.send('second');
    const [first, second] = sim.journal.entries;
    const agentTool = (entry: typeof first) =>
      (requestBody(entry!).tools as unknown as Array<{ name: string; description: string }>).find(
        (tool) => tool.name === 'Agent',
      )!;
    expect(agentTool(first).description).not.toContain('general-purpose:');
    expect(agentTool(first).description).toBe(agentTool(second).description);
    expect(first!.fingerprint!.tools).toBe(second!.fingerprint!.tools);
    expect(JSON.stringify(requestBody(first!).messages[0])).toContain('- general-purpose:');
    expect(JSON.stringify(requestBody(second!).messages.at(-1))).toContain(
      '- translator: Does translator work',
    );
  });

  it('is part of the tool description when agentListInMessages is off', async () => {
    current = await createTestSession({
      policy: rules([], { fallback: 'ok' }),
      session: { agentListInMessages: false },
    });
    await current.session.send('hi');
    const tools = requestBody(current.sim.journal.entries[0]!).tools as unknown as Array<{
      name: string;
      description: string;
    }>;
    expect(tools.find((tool) => tool.name === 'Agent')!.description).toContain('- Explore:');
    expect(JSON.stringify(requestBody(current.sim.journal.entries[0]!).messages)).not.toContain(
      '<system-reminder>',
    );
  });
});
