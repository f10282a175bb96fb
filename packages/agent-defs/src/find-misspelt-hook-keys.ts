import { closestKey, isObject } from '@delegate/core';
const MATCHER_KEYS = ['matcher', 'hooks'];
const HOOK_KEYS = [
  'type',
  'command',
  'prompt',
  'url',
  'server',
  'tool',
  'timeout',
  'async',
  'once',
];

/** What ignoring a misspelt key of a hook means, by the key that was meant. */
const EFFECT: Readonly<Record<string, string>> = {
  matcher: ', so the entry runs for every tool',
  timeout: ', so the hook gets the default timeout',
  once: ', so the hook runs every time',
  async: ', so the hook is waited for',
};

function misspelt(path: string, key: string, known: readonly string[]): string | undefined {
  if (known.includes(key)) return undefined;
  const meant = closestKey(key, known, { mode: 'strict' });
  if (meant === undefined) return undefined;
  const shown = key.length > 40 ? `${key.slice(0, 40)}…` : key;
  return `\`hooks.${path}.${shown}\` is not a hook field and is ignored (Claude Code ignores it too)${EFFECT[meant] ?? ''}; did you mean \`${meant}\`?`;
}

/**
 * Notes for the keys of an agent's `hooks` that look like a known field misspelt
 * (`matchr`, `timout`): Claude Code ignores them, and the hook then runs other than meant (a
 * `matchr` entry for every tool). Other unknown keys are left alone: hooks may carry fields a
 * newer Claude Code reads. `hooks` has the shape `validateHooks` accepts.
 */
export function findMisspeltHookKeys(hooks: Readonly<Record<string, unknown>>): string[] {
  const notes: string[] = [];
  for (const [event, entries] of Object.entries(hooks)) {
    if (!Array.isArray(entries)) continue;
    entries.forEach((entry: unknown, index) => {
      if (!isObject(entry)) return;
      for (const key of Object.keys(entry)) {
        const note = misspelt(`${event}[${index}]`, key, MATCHER_KEYS);
        if (note) notes.push(note);
      }
      const commands = Array.isArray(entry['hooks']) ? (entry['hooks'] as unknown[]) : [];
      commands.forEach((command, at) => {
        if (!isObject(command)) return;
        for (const key of Object.keys(command)) {
          const note = misspelt(`${event}[${index}].hooks[${at}]`, key, HOOK_KEYS);
          if (note) notes.push(note);
        }
      });
    });
  }
  return notes;
}
