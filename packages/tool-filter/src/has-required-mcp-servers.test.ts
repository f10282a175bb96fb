import { describe, expect, it } from 'vitest';
import { filterAgentsByMcpRequirements } from './filter-agents-by-mcp-requirements.js';
import { hasRequiredMcpServers, missingMcpServers } from './has-required-mcp-servers.js';

describe('hasRequiredMcpServers', () => {
  it('is true for an agent that requires nothing', () => {
    expect(hasRequiredMcpServers({}, [])).toBe(true);
    expect(hasRequiredMcpServers({ requiredMcpServers: [] }, [])).toBe(true);
  });

  it('matches each pattern as a case-insensitive substring of a server name', () => {
    const servers = ['GitHub-Enterprise', 'slack'];
    expect(hasRequiredMcpServers({ requiredMcpServers: ['github'] }, servers)).toBe(true);
    expect(hasRequiredMcpServers({ requiredMcpServers: ['GITHUB', 'Slack'] }, servers)).toBe(true);
    expect(hasRequiredMcpServers({ requiredMcpServers: ['github', 'jira'] }, servers)).toBe(false);
  });

  it('is false when no server has tools', () => {
    expect(hasRequiredMcpServers({ requiredMcpServers: ['github'] }, [])).toBe(false);
  });
});

describe('missingMcpServers', () => {
  it('lists the patterns no server matches', () => {
    expect(
      missingMcpServers({ requiredMcpServers: ['github', 'jira', 'SLACK'] }, ['slack-bot']),
    ).toEqual(['github', 'jira']);
  });
});

describe('filterAgentsByMcpRequirements', () => {
  it('keeps the agents whose requirements are met, in order', () => {
    const agents = [
      { agentType: 'plain' },
      { agentType: 'tracker', requiredMcpServers: ['jira'] },
      { agentType: 'coder', requiredMcpServers: ['git'] },
    ];
    const result = filterAgentsByMcpRequirements(agents, ['github']);
    expect(result.map((agent) => agent.agentType)).toEqual(['plain', 'coder']);
  });
});
