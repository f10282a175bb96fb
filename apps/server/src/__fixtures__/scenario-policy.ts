import type { Policy, Reply, SimRequest } from '@delegate/api-sim';

type Gate = { promise: Promise<void>; open: () => void };

/** Named gates a policy waits on; `open` lets the held request answer. */
export class Gates {
  private readonly gates = new Map<string, Gate>();

  /** The gate of `name`, made closed on first use. */
  get(name: string): Gate {
    let gate = this.gates.get(name);
    if (!gate) {
      let open!: () => void;
      const promise = new Promise<void>((resolve) => (open = resolve));
      gate = { promise, open };
      this.gates.set(name, gate);
    }
    return gate;
  }

  /** Opens a gate (making it if needed). */
  open(name: string): void {
    this.get(name).open();
  }

  /** Opens every gate (end of a test). */
  openAll(): void {
    for (const gate of this.gates.values()) gate.open();
  }

  /** Forgets every gate so the next use starts closed. */
  reset(): void {
    this.openAll();
    this.gates.clear();
  }
}

function scenarioOf(request: SimRequest): string {
  const match = /scenario:([a-z0-9-]+)/.exec(JSON.stringify(request.messages));
  return match?.[1] ?? 'none';
}

const agentCall = (input: Record<string, unknown>): Reply => [
  { type: 'tool_use', name: 'Agent', input },
];

/**
 * One policy for many tests: the scenario is named in the prompt (`scenario:NAME`) and
 * carried into sub-agent prompts, so each test picks its behaviour by its prompt.
 */
export function scenarioPolicy(gates: Gates): Policy {
  return async (request) => {
    const scenario = scenarioOf(request);
    const main = request.agent === undefined;
    const hasResults = request.toolResults.length > 0;
    const notified = request.lastUserText.includes('<task-notification>');
    switch (scenario) {
      case 'hello':
        if (request.turnIndex === 0) return 'Hello from the model.';
        return `You said: ${request.lastUserText.trim().split('\n').at(-1)} (turn ${request.turnIndex})`;
      case 'hold':
        await gates.get('hold').promise;
        return 'Released.';
      case 'fg':
        if (!main) {
          await gates.get('fg').promise;
          return 'Foreground work done.';
        }
        if (notified) return 'The moved agent reported back.';
        if (hasResults) return `Main got: ${request.toolResults[0]?.content.slice(0, 80)}`;
        return agentCall({
          description: 'held foreground work',
          prompt: 'scenario:fg work',
          subagent_type: 'general-purpose',
        });
      case 'bg':
        if (!main) {
          if (request.lastUserText.includes('scenario:bg-quick'))
            return 'Quick background work done.';
          await gates.get('bg').promise;
          return 'Background work done.';
        }
        if (notified) return 'Main saw the background agents end.';
        if (hasResults) return 'Started the background agents.';
        if (request.lastUserText.includes('interrupted')) return 'Continuing after the restart.';
        return [
          {
            type: 'tool_use',
            name: 'Agent',
            input: {
              description: 'held background work',
              prompt: 'scenario:bg work',
              subagent_type: 'general-purpose',
              run_in_background: true,
            },
          },
          {
            type: 'tool_use',
            name: 'Agent',
            input: {
              description: 'quick background work',
              prompt: 'scenario:bg-quick work',
              subagent_type: 'general-purpose',
              run_in_background: true,
            },
          },
        ];
      case 'notify-resume':
        // The main agent's turn after the launch is held, so the agent's notification waits
        // in the queue; a resumed turn reports how many notifications its request holds.
        if (!main) return 'Resumable work done.';
        if (notified)
          return `Main heard ${JSON.stringify(request.messages).split('<task-notification>\\ntask-id:').length - 1} notification(s).`;
        if (hasResults) {
          await gates.get('notify-resume').promise;
          return 'Started the background agent.';
        }
        return agentCall({
          description: 'resumable work',
          prompt: 'scenario:notify-resume work',
          subagent_type: 'general-purpose',
          run_in_background: true,
        });
      case 'tree':
        if (!main && request.forkDirective === undefined) {
          await gates.get('tree').promise;
          return 'Survey done.';
        }
        if (!main) return `Fork report on: ${request.forkDirective}`;
        if (notified) return 'All agents are done.';
        if (hasResults) return 'Both forks reported; the survey runs in the background.';
        return [
          {
            type: 'tool_use',
            name: 'Agent',
            input: { description: 'audit parser', prompt: 'Directive: audit the parser' },
          },
          {
            type: 'tool_use',
            name: 'Agent',
            input: { description: 'audit printer', prompt: 'Directive: audit the printer' },
          },
          {
            type: 'tool_use',
            name: 'Agent',
            input: {
              description: 'survey',
              prompt: 'scenario:tree survey the workspace',
              subagent_type: 'general-purpose',
              run_in_background: true,
            },
          },
        ];
      case 'bash':
        if (hasResults) return `Environment: ${request.toolResults[0]?.content}`;
        return [
          {
            type: 'tool_use',
            name: 'Bash',
            input: { command: 'env', description: 'print the environment' },
          },
        ];
      case 'read-notes':
        // Reads notes.txt of the workspace with Read and with Bash, and reports what it saw.
        if (hasResults)
          return `Notes: ${request.toolResults.map((result) => result.content).join('\n')}`;
        return [
          { type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } },
          {
            type: 'tool_use',
            name: 'Bash',
            input: { command: 'cat notes.txt', description: 'print the notes' },
          },
        ];
      case 'shell':
        if (hasResults) return 'Started the shell.';
        return [
          {
            type: 'tool_use',
            name: 'Bash',
            input: {
              command: 'sleep 0.2; echo done',
              description: 'wait a little',
              run_in_background: true,
            },
          },
        ];
      case 'shell-long':
        if (hasResults) return 'Started the long shell.';
        return [
          {
            type: 'tool_use',
            name: 'Bash',
            input: {
              // A marker in the prompt names the shell for a test that looks for its process.
              command: `sleep 60; echo ${/marker-[a-z0-9]+/.exec(request.lastUserText)?.[0] ?? 'none'}`,
              description: 'wait long',
              run_in_background: true,
            },
          },
        ];
      case 'api-fail':
        // The main agent lists the files; every later request fails mid-stream.
        if (!hasResults && request.turnIndex === 0)
          return [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }];
        return {
          fault: {
            kind: 'stream_error',
            afterEvents: 2,
            errorType: 'api_error',
            message: 'Internal server error',
          },
        };
      case 'bg-fail':
        // A background agent whose every request fails mid-stream; the main agent goes on.
        if (!main) {
          return {
            fault: { kind: 'stream_error', afterEvents: 2, errorType: 'api_error', message: 'Boom' },
          };
        }
        if (notified) return `Main was told: ${request.lastUserText.slice(0, 400)}`;
        if (hasResults) return 'Started the doomed agent.';
        return agentCall({
          description: 'doomed work',
          prompt: 'scenario:bg-fail work',
          subagent_type: 'general-purpose',
          run_in_background: true,
        });
      case 'reviewer':
        return request.system.includes('You review code for the tests')
          ? 'Running as the reviewer.'
          : 'Running without the reviewer prompt.';
      default:
        return `No scenario in: ${request.lastUserText.slice(0, 80)}`;
    }
  };
}
