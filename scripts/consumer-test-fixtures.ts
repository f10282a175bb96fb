/**
 * What the consumer test writes into its fresh projects: a script that uses
 * @delegate/tool-filter's documented API, a TypeScript file that uses @delegate/runtime and
 * @delegate/api-sim (type-checked with strict settings), and the `delegate-sim` mistakes that
 * must end with one line and exit status 2.
 */

/** Uses @delegate/tool-filter as its README documents and fails loudly on any difference. */
export const toolFilterScript = `import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import {
  createAgentDeniedError,
  filterToolsForAgent,
  getDenyRuleForAgent,
  permissionRuleValueFromString,
  permissionRuleValueToString,
  resolveAgentTools,
} from '@delegate/tool-filter';

const names = ['Read', 'Write', 'Bash', 'Agent', 'TaskOutput', 'AskUserQuestion', 'WebFetch', 'mcp__github__search'];
const pool = names.map((name) => ({ name }));

// An async custom agent keeps only the async allow-list and MCP tools.
const asyncTools = filterToolsForAgent({ tools: pool, isBuiltIn: false, isAsync: true });
assert.deepEqual(asyncTools.map((tool) => tool.name), ['Read', 'Write', 'Bash', 'WebFetch', 'mcp__github__search']);

// A foreground custom agent loses the all-agents deny set (Agent, TaskOutput, AskUserQuestion).
const foreground = filterToolsForAgent({ tools: pool, isBuiltIn: false });
assert.deepEqual(foreground.map((tool) => tool.name), ['Read', 'Write', 'Bash', 'WebFetch', 'mcp__github__search']);

// tools / disallowedTools of a definition, with an Agent(worker) restriction.
const resolved = resolveAgentTools(
  { source: 'projectSettings', tools: ['Read', 'Grep', 'Agent(worker)'], disallowedTools: ['Bash'] },
  pool,
  { isAsync: false },
);
assert.deepEqual(resolved.resolvedTools.map((tool) => tool.name), ['Read']);
assert.deepEqual(resolved.invalidTools, ['Grep']);
assert.deepEqual(resolved.allowedAgentTypes, ['worker']);

// The rule syntax round-trips escaped parentheses.
const rule = permissionRuleValueFromString('Bash(echo \\\\(hi\\\\))');
assert.deepEqual(rule, { toolName: 'Bash', ruleContent: 'echo (hi)' });
assert.equal(permissionRuleValueToString(rule), 'Bash(echo \\\\(hi\\\\))');

// A deny rule hides an agent type; a policy rule is reported first.
const denyRules = [
  { source: 'userSettings', ruleBehavior: 'deny', ruleValue: { toolName: 'Agent', ruleContent: 'Explore' } },
  { source: 'policySettings', ruleBehavior: 'deny', ruleValue: { toolName: 'Task', ruleContent: 'Plan, Explore' } },
];
const denied = getDenyRuleForAgent({ denyRules }, 'Agent', 'Explore');
assert.equal(denied?.source, 'policySettings');
assert.equal(getDenyRuleForAgent({ denyRules }, 'Agent', 'general-purpose'), undefined);

// The error is a DelegateError that prints under its own name.
const error = createAgentDeniedError('Explore', denied);
assert.equal(error.code, 'AGENT_DENIED');
assert.equal(error.name, 'DelegateError');
assert.equal(error.constructor.name, 'DelegateError');
assert.match(inspect(error), /^DelegateError: /);
console.log('  tool-filter works from its tarball; the denial prints as: ' + inspect(error).split('\\n')[0]);
`;

/** Uses both packages with their exported types; type-checked, never run. */
export const runtimeTypeCheckSource = `import { rules, startSim, type Sim, type SimRequest } from '@delegate/api-sim';
import { DelegateSession } from '@delegate/runtime';

const isMain = (request: SimRequest): boolean => request.agent === undefined;
const sim: Sim = await startSim({
  policy: rules([
    { match: { when: isMain, toolResult: false }, reply: 'Hello.' },
    { match: { agent: 'Explore' }, reply: (request: SimRequest) => \`Turn \${request.turnIndex}\` },
  ]),
});
const session = await DelegateSession.create({
  cwd: process.cwd(),
  apiKey: 'sim',
  baseURL: sim.url,
  transcriptDir: false,
});
const result = await session.send('Say hello');
const text: string = result.text;
console.log(text.toUpperCase());
await sim.close();
`;

/** One `delegate-sim` mistake: files to write first, arguments, and the line to expect. */
export type BinCheck = { files: Record<string, string>; args: string[]; pattern: RegExp };

/** Mistakes with a policy file or a flag; each must print one line and exit 2. */
export const apiSimBinChecks: BinCheck[] = [
  {
    files: {},
    args: ['--policy', 'missing-policy.mjs'],
    pattern: /policy file not found: missing-policy\.mjs/,
  },
  {
    files: { 'no-default.mjs': 'export const policy = () => "x";\n' },
    args: ['--policy', 'no-default.mjs'],
    pattern: /no-default\.mjs must export a policy function as its default export/,
  },
  {
    files: { 'broken.mjs': 'export default (\n' },
    args: ['--policy', 'broken.mjs'],
    pattern: /broken\.mjs failed to load: SyntaxError: .*node --check broken\.mjs/,
  },
  { files: {}, args: ['--port', 'eighty'], pattern: /--port needs a non-negative number.*--help/ },
];
