import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CliSettings } from './settings-schema.js';

describe('CliSettings', () => {
  it('accepts the settings file the README shows, every field of it', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const example = /```json\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example, 'a ```json settings example in apps/cli/README.md').toBeDefined();
    const parsed = CliSettings.safeParse(JSON.parse(example ?? ''));
    expect(parsed.error?.issues ?? []).toEqual([]);
    expect(Object.keys(parsed.data ?? {}).sort()).toEqual(
      Object.keys(JSON.parse(example ?? '') as object).sort(),
    );
  });
});
