import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readStoppedAgents, recordStoppedAgents } from './stopped-agents.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'delegate-stopped-'));
});
afterEach(async () => {
  await chmod(root, 0o700).catch(() => undefined);
  await rm(root, { recursive: true, force: true });
});

describe('the record of agents the person stopped', () => {
  it('keeps every stop of a session, later ones added to earlier ones', async () => {
    expect(
      recordStoppedAgents(root, 's1', new Map([['a1', 'Stopped by Ctrl-C at 10:00:00 UTC.']])),
    ).toBeUndefined();
    recordStoppedAgents(root, 's1', new Map([['a2', 'Stopped by SIGTERM at 11:00:00 UTC.']]));
    expect(readStoppedAgents(root, 's1')).toEqual(
      new Map([
        ['a1', 'Stopped by Ctrl-C at 10:00:00 UTC.'],
        ['a2', 'Stopped by SIGTERM at 11:00:00 UTC.'],
      ]),
    );
    // Nothing else is left beside it (the file is written aside, then renamed).
    expect(JSON.parse(await readFile(join(root, 's1', 'stopped-agents.json'), 'utf8'))).toEqual({
      a1: 'Stopped by Ctrl-C at 10:00:00 UTC.',
      a2: 'Stopped by SIGTERM at 11:00:00 UTC.',
    });
    // Another session's record is its own.
    expect(readStoppedAgents(root, 's2').size).toBe(0);
  });

  it('reads a missing, corrupt or wrong-shaped record as no stops, keeping the well-formed entries', async () => {
    await mkdir(join(root, 's1'));
    const path = join(root, 's1', 'stopped-agents.json');
    await writeFile(path, '{"a1": "Stopped', 'utf8');
    expect(readStoppedAgents(root, 's1').size).toBe(0);
    await writeFile(path, '["a1"]', 'utf8');
    expect(readStoppedAgents(root, 's1').size).toBe(0);
    await writeFile(path, '{"a1": 3, "a2": "Stopped."}', 'utf8');
    expect(readStoppedAgents(root, 's1')).toEqual(new Map([['a2', 'Stopped.']]));
  });

  it('says why when the record cannot be written, and writes nothing for no agents', async () => {
    expect(recordStoppedAgents(join(root, 'none'), 's1', new Map())).toBeUndefined();
    await writeFile(join(root, 'file'), 'in the way', 'utf8');
    expect(recordStoppedAgents(join(root, 'file'), 's1', new Map([['a1', 'x']]))).toMatch(
      /EEXIST|ENOTDIR/,
    );
  });
});
