// The main agent starts AGENTS general-purpose agents in one message; each calls Glob STEPS
// times and reports: (STEPS × 2 + 3) lifecycle events per agent (1,000 with 40 agents × 11 steps).
const AGENTS = Number(process.env.DELEGATE_BENCH_AGENTS ?? 25);
const STEPS = Number(process.env.DELEGATE_BENCH_STEPS ?? 8);

export default function policy(request) {
  if (request.agent === 'general-purpose') {
    const done = request.toolResults.length > 0 ? request.turnIndex : 0;
    if (done >= STEPS) return `worker done after ${done} steps`;
    return [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }];
  }
  if (request.toolResults.some((result) => result.toolName === 'Agent')) return 'all workers done';
  return Array.from({ length: AGENTS }, (_, index) => ({
    type: 'tool_use',
    name: 'Agent',
    input: {
      description: `worker ${index}`,
      prompt: `Work item ${index}`,
      subagent_type: 'general-purpose',
    },
  }));
}
