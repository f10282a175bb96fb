import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { getBuiltInAgents } from '@delegate/agent-defs';
import { customAgent, requestBody } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import { createApiClient } from '../session/model-config.js';
import { DelegateSession } from '../session/session.js';

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

  it('is not sent again by a resumed session when the agents are the same', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'ok' }) });
    const test = current;
    await test.session.send('first');
    await test.session.close();
    const resumeAndSend = async (prompt: string) => {
      const resumed = await DelegateSession.create({
        cwd: test.cwd,
        client: createApiClient({ apiKey: 'k', baseURL: test.sim.url }),
        transcriptDir: test.transcriptDir,
        homeDir: test.homeDir,
        sessionId: test.session.sessionId,
        resume: true,
        agentDefinitions: test.session.runtime.getAgentDefinitions(),
      });
      await resumed.send(prompt);
      await resumed.close();
    };
    await resumeAndSend('second');
    await resumeAndSend('third');
    const lists = (text: string) =>
      text.split('Agent types available to the Agent tool').length - 1;
    const last = JSON.stringify(requestBody(test.sim.journal.entries.at(-1)!).messages);
    expect(last).toContain('third');
    expect(lists(last)).toBe(1);
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
