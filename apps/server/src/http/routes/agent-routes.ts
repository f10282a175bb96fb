import { createRoute } from '@hono/zod-openapi';
import { loadWorkspaceAgents } from '../../runner/prepare-session.js';
import { resolveWorkspace } from '../../workspace/resolve-workspace.js';
import { type App, type AppDependencies, SECURITY } from '../app-context.js';
import { AgentDefinitionsView, AgentsQuery } from '../schemas.js';
import { BAD_REQUEST, COMMON_ERRORS, json } from './openapi-responses.js';

const listAgents = createRoute({
  method: 'get',
  path: '/v1/agents',
  summary: 'Effective agent definitions of a workspace, with sources, overrides and diagnostics',
  tags: ['agents'],
  security: SECURITY,
  request: { query: AgentsQuery },
  responses: {
    200: json('The definitions.', AgentDefinitionsView),
    ...BAD_REQUEST,
    ...COMMON_ERRORS,
  },
});

/**
 * Registers `GET /v1/agents`. The answer is redacted as a whole: agent files are workspace
 * text, and a run with Bash can write the server's key or token into one.
 */
export function registerAgentRoutes(
  app: App,
  dependencies: AppDependencies & { redact: <T>(value: T) => T },
): void {
  app.openapi(listAgents, async (c) => {
    const workspace = await resolveWorkspace({
      requested: c.req.valid('query').workspace,
      roots: dependencies.workspaceRoots,
      configuredRoots: dependencies.configuredWorkspaceRoots,
    });
    const loaded = await loadWorkspaceAgents({
      workspace,
      ...(dependencies.homeDir ? { homeDir: dependencies.homeDir } : {}),
      trustAgentFiles: dependencies.trustWorkspaceAgents,
    });
    const active = new Set(loaded.activeAgents);
    const winner = new Map(loaded.activeAgents.map((agent) => [agent.agentType, agent]));
    return c.json(
      dependencies.redact({
        workspace,
        agents: loaded.allAgents.map((agent) => ({
          agentType: agent.agentType,
          whenToUse: agent.whenToUse,
          source: agent.source,
          active: active.has(agent),
          overriddenBy: active.has(agent) ? null : (winner.get(agent.agentType)?.source ?? null),
          model: agent.model ?? null,
          tools: agent.tools ?? null,
          disallowedTools: agent.disallowedTools ?? null,
          permissionMode: agent.permissionMode ?? null,
          background: agent.background ?? false,
          color: agent.color ?? null,
          filePath: agent.filePath ?? null,
        })),
        diagnostics: loaded.diagnostics.map((diagnostic) => ({
          filePath: diagnostic.filePath,
          reason: diagnostic.reason,
          severity: diagnostic.severity,
          ...(diagnostic.line !== undefined ? { line: diagnostic.line } : {}),
          ...(diagnostic.agentType !== undefined ? { agentType: diagnostic.agentType } : {}),
        })),
      }),
      200,
    );
  });
}
