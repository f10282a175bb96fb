import type { Policy, ReplyBlock, SimRequest } from '@delegate/api-sim';

/** The three parts of the sample project the workers survey. */
export const DEMO_AREAS = [
  { folder: 'src/api', label: 'the HTTP layer' },
  { folder: 'src/core', label: 'the cart, pricing and stock rules' },
  { folder: 'src/storage', label: 'the SQLite storage' },
] as const;

/** How the demo's workers are started: as forks, or as fresh agents given the context as text. */
export type DemoVariant = 'fork' | 'fresh';

/** The prompt the demo sends to the main agent. */
export const DEMO_PROMPT =
  'Give me a tour of this project: what each part does, the open TODO notes, and a plan for fixing what looks wrong.';

/** How each worker's Agent call description starts (the comparison finds the workers by it). */
export const WORKER_DESCRIPTION_PREFIX = 'survey ';

/** Description of each worker's Agent call. */
export function workerDescription(folder: string): string {
  return `${WORKER_DESCRIPTION_PREFIX}${folder}`;
}

const BACKGROUND_DESCRIPTION = 'collect TODO and FIXME notes';

/** What the main agent reads before it hands out work: the shared context of the workers. */
const CONTEXT_FILES = [
  'docs/architecture.md',
  'docs/decisions.md',
  'package.json',
  'src/core/cart.ts',
  'src/core/pricing.ts',
  'src/api/routes.ts',
];

function surveyDirective(area: (typeof DEMO_AREAS)[number]): string {
  return `Survey ${area.folder} (${area.label}): list its files, find what it exports, read its main file, and report what it does and anything that looks wrong.`;
}

function textBlocks(request: SimRequest, role: 'user' | 'assistant'): string[] {
  return request.messages
    .filter((message) => message.role === role)
    .flatMap((message) => message.content)
    .flatMap((block) =>
      block['type'] === 'text' && typeof block['text'] === 'string' ? [block['text']] : [],
    );
}

/** The text of a tool_result block (a string, or text blocks). */
function resultText(block: Record<string, unknown>): string {
  const content = block['content'];
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) =>
      typeof part === 'object' && part !== null && 'text' in part
        ? String((part as { text: unknown }).text)
        : '',
    )
    .join('\n');
}

/** Every tool result of the conversation, oldest first. */
function allResults(request: SimRequest): string[] {
  return request.messages
    .filter((message) => message.role === 'user')
    .flatMap((message) => message.content)
    .filter((block) => block['type'] === 'tool_result')
    .map(resultText);
}

/** The text of the latest result of `toolName` anywhere in the conversation. */
function latestResult(request: SimRequest, toolName: string): string | undefined {
  const names = new Map<string, string>();
  for (const message of request.messages) {
    for (const block of message.content) {
      if (block['type'] === 'tool_use') names.set(String(block['id']), String(block['name']));
    }
  }
  let found: string | undefined;
  for (const message of request.messages) {
    if (message.role !== 'user') continue;
    for (const block of message.content) {
      if (block['type'] !== 'tool_result' || names.get(String(block['tool_use_id'])) !== toolName)
        continue;
      found = resultText(block);
    }
  }
  return found;
}

function lastToolNames(request: SimRequest): string[] {
  return request.toolResults.map((result) => result.toolName ?? '');
}

function toolUse(name: string, input: Record<string, unknown>): ReplyBlock {
  return { type: 'tool_use', name, input };
}

function lines(text: string | undefined): string[] {
  return (text ?? '').split('\n').filter((line) => line.trim() !== '');
}

function relative(path: string): string {
  const index = path.indexOf('/src/');
  return index === -1 ? path : path.slice(index + 1);
}

// ---------------------------------------------------------------- the workers

function workerArea(request: SimRequest): (typeof DEMO_AREAS)[number] | undefined {
  // A fork's directive and a fresh worker's prompt both name the area; the latest one wins.
  const texts = textBlocks(request, 'user').reverse();
  for (const text of texts) {
    const area = DEMO_AREAS.find((candidate) => text.includes(`Survey ${candidate.folder} `));
    if (area) return area;
  }
  return undefined;
}

function workerStep(request: SimRequest, area: (typeof DEMO_AREAS)[number]): ReplyBlock[] | string {
  const last = lastToolNames(request);
  if (last.includes('Read')) return workerReport(request, area);
  if (last.includes('Grep')) {
    const files = lines(latestResult(request, 'Glob'));
    const main =
      files.find((file) => !file.endsWith('shop-error.ts')) ??
      files[0] ??
      `${area.folder}/index.ts`;
    return [toolUse('Read', { file_path: main })];
  }
  if (last.includes('Glob')) {
    return [toolUse('Grep', { pattern: '^export ', path: area.folder, output_mode: 'content' })];
  }
  return [toolUse('Glob', { pattern: `${area.folder}/**/*.ts` })];
}

function workerReport(request: SimRequest, area: (typeof DEMO_AREAS)[number]): string {
  const files = lines(latestResult(request, 'Glob')).map(relative);
  const exports = lines(latestResult(request, 'Grep'))
    .map((line) => /export (?:async )?(?:function|const|class|type) (\w+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
  const read = latestResult(request, 'Read') ?? '';
  const notes = lines(read)
    .filter((line) => /TODO|FIXME/.test(line))
    .map((line) => line.replace(/^\s*\d+\s*[→|:\t]\s*/, '').trim());
  return [
    `Scope: ${area.folder}, ${area.label}.`,
    `Result: ${files.length} files; exports ${exports.slice(0, 8).join(', ') || 'nothing'}${exports.length > 8 ? ', …' : ''}.`,
    `Key files: ${files.join(', ')}`,
    ...(notes.length > 0 ? [`Issues: ${notes.join(' / ')}`] : []),
  ].join('\n');
}

// ------------------------------------------------------- background and Plan

function backgroundStep(request: SimRequest): ReplyBlock[] | string {
  if (lastToolNames(request).includes('Grep')) {
    const found = lines(latestResult(request, 'Grep')).filter((line) => /TODO|FIXME/.test(line));
    return `Found ${found.length} TODO/FIXME notes:\n${found.map((line) => `- ${relative(line.trim())}`).join('\n')}`;
  }
  return [toolUse('Grep', { pattern: 'TODO|FIXME', output_mode: 'content' })];
}

function planStep(request: SimRequest): ReplyBlock[] | string {
  if (!lastToolNames(request).includes('Read')) {
    return [toolUse('Read', { file_path: 'src/core/pricing.ts' })];
  }
  const read = latestResult(request, 'Read') ?? '';
  const taxLine = lines(read).find((line) => line.includes('const tax'));
  return [
    'Plan:',
    '1. Round tax per line, half-even, as docs/architecture.md requires; add a test with three lines that round differently.',
    '2. Make checkout idempotent per payment token (store the token with the order; a repeat returns the first result).',
    '3. Add the reservation sweeper: release reservations past expiresAt, run it every minute.',
    '4. Price or drop the ignored checkout coupon field.',
    `Critical files: src/core/pricing.ts (${taxLine ? `tax today: ${taxLine.replace(/^\s*\d+\s*[→|:\t]\s*/, '').trim()}` : 'tax rule'}), src/api/routes.ts, src/core/inventory.ts, src/api/validate.ts`,
  ].join('\n');
}

// --------------------------------------------------------------- main agent

function contextAsText(request: SimRequest): string {
  return `Context from the main agent (every tool result it has so far):\n\n${allResults(request).join('\n\n---\n\n')}`;
}

function spawnWorkers(request: SimRequest, variant: DemoVariant): ReplyBlock[] {
  const background = toolUse('Agent', {
    description: BACKGROUND_DESCRIPTION,
    prompt: 'List every TODO and FIXME note in the project with its file and line.',
    subagent_type: 'general-purpose',
    run_in_background: true,
  });
  const context = variant === 'fresh' ? contextAsText(request) : '';
  const workers = DEMO_AREAS.map((area) =>
    toolUse('Agent', {
      description: workerDescription(area.folder),
      prompt: variant === 'fork' ? surveyDirective(area) : `${context}\n\n${surveyDirective(area)}`,
      ...(variant === 'fresh' ? { subagent_type: 'general-purpose' } : {}),
    }),
  );
  return [background, ...workers];
}

function askPlan(request: SimRequest): ReplyBlock[] {
  const reports = request.toolResults
    .map((result) => result.content)
    .filter((content) => content.includes('Scope:'))
    .map((content) => content.split('\n\nagentId:')[0])
    .join('\n\n');
  return [
    toolUse('Agent', {
      description: 'plan the fixes',
      prompt: `The surveys of tiny-shop found this:\n\n${reports}\n\nPlan how to fix what looks wrong, most important first.`,
      subagent_type: 'Plan',
    }),
  ];
}

/** The first line of the result of the latest `<task-notification>` in the conversation. */
function notificationText(request: SimRequest): string | undefined {
  const notification = textBlocks(request, 'user')
    .filter((text) => text.includes('<task-notification>'))
    .at(-1);
  if (!notification) return undefined;
  const result = /\nresult:\n(.*)/.exec(notification)?.[1]?.trim().replace(/:$/, '');
  return (
    result ?? /\nsummary: (.*)/.exec(notification)?.[1]?.trim() ?? 'a background agent finished'
  );
}

function finalAnswer(request: SimRequest): string {
  const surveys = allResults(request)
    .filter((text) => text.startsWith('Scope:'))
    .map((text) => text.split('\n'));
  const scopes = surveys.map(
    (report) => `- ${report[0]?.replace('Scope: ', '')} ${report[1]?.replace('Result: ', '')}`,
  );
  const plan = request.toolResults
    .find((result) => result.content.includes('Plan:'))
    ?.content.split('\n\n')[0];
  const notes = notificationText(request);
  return [
    'tiny-shop is an order service in three layers:',
    ...scopes,
    notes
      ? `The background scan reported: ${notes}`
      : 'The TODO scan is still running in the background.',
    plan ?? '',
  ]
    .filter((line) => line !== '')
    .join('\n');
}

function mainStep(request: SimRequest, variant: DemoVariant): ReplyBlock[] | string {
  // A notification on its own (the main agent had already answered) gets a short reply.
  if (request.toolResults.length === 0 && notificationText(request) && request.turnIndex > 0) {
    return `The background scan has finished: ${notificationText(request) ?? ''}`;
  }
  switch (request.turnIndex) {
    case 0:
      return [toolUse('Glob', { pattern: '**/*' }), toolUse('Read', { file_path: 'README.md' })];
    case 1:
      return CONTEXT_FILES.map((file) => toolUse('Read', { file_path: file }));
    case 2:
      return spawnWorkers(request, variant);
    case 3:
      return askPlan(request);
    default:
      return finalAnswer(request);
  }
}

/**
 * The scripted model of `delegate demo`. The main agent reads the project, starts a
 * background agent and three workers in one message (forks, or fresh agents given what it
 * read as text), asks Plan for a plan and answers; each step uses real tools on the sample
 * project, and each report is built from what those tools returned.
 */
export function createDemoPolicy(variant: DemoVariant): Policy {
  return (request) => {
    const agent = request.agent;
    if (agent === 'Plan') return planStep(request);
    if (agent === 'fork' || agent === 'general-purpose') {
      const area = workerArea(request);
      if (area) return workerStep(request, area);
      if (agent === 'general-purpose') return backgroundStep(request);
    }
    return mainStep(request, variant);
  };
}
