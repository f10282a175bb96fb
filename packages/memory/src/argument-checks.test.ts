import { DelegateError } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import * as memory from './index.js';

async function thrown(call: () => unknown): Promise<DelegateError> {
  try {
    await call();
  } catch (error) {
    if (error instanceof DelegateError) return error;
    throw error;
  }
  throw new Error('expected a DelegateError, but the call returned');
}

// Each case: what the call is, the call with one bad argument, and the argument it must name.
// Every call fails before it touches the file system.
const cases: [string, () => unknown, string][] = [
  [
    'getAgentMemoryRoot options null',
    () => memory.getAgentMemoryRoot('project', null as never),
    'options',
  ],
  [
    'getAgentMemoryDir options 42',
    () => memory.getAgentMemoryDir('a', 'project', 42 as never),
    'options',
  ],
  [
    'getAgentMemoryFile options text',
    () => memory.getAgentMemoryFile('a', 'project', 'x' as never),
    'options',
  ],
  [
    'getAgentMemoryRoot rootDirName 42',
    () => memory.getAgentMemoryRoot('project', { rootDirName: 42 as never }),
    'options.rootDirName',
  ],
  ['clearMemory options null', () => memory.clearMemory('a', 'project', null as never), 'options'],
  ['readMemory options []', () => memory.readMemory('a', 'project', [] as never), 'options'],
  [
    'writeMemoryIndex options null',
    () => memory.writeMemoryIndex('a', 'project', 'x', null as never),
    'options',
  ],
  [
    'appendMemoryEntry options 42',
    () => memory.appendMemoryEntry('a', 'project', 'x', 42 as never),
    'options',
  ],
  [
    'prepareAgentMemory options null',
    () => memory.prepareAgentMemory('a', 'project', null as never),
    'options',
  ],
  [
    'prepareAgentMemory onError 42',
    () => memory.prepareAgentMemory('a', 'project', { cwd: '/nowhere', onError: 42 as never }),
    'options.onError',
  ],
  [
    'loadAgentMemoryPrompt options text',
    () => memory.loadAgentMemoryPrompt('a', 'project', 'x' as never),
    'options',
  ],
  ['listMemory options null', () => memory.listMemory(null as never), 'options'],
  ['listMemory scopes 42', () => memory.listMemory({ scopes: 42 as never }), 'options.scopes'],
  [
    'listMemory knownAgentTypes text',
    () => memory.listMemory({ knownAgentTypes: 'abc' as never }),
    'options.knownAgentTypes',
  ],
  [
    'listMemory knownAgentTypes element null',
    () => memory.listMemory({ knownAgentTypes: [null as never] }),
    'options.knownAgentTypes[0]',
  ],
  [
    'decodeAgentTypeFromPath(null)',
    () => memory.decodeAgentTypeFromPath(null as never),
    'folderName',
  ],
  ['assertInsideRoot(42, …)', () => memory.assertInsideRoot(42 as never, '/a/b'), 'root'],
  [
    'assertInsideRoot(…, undefined)',
    () => memory.assertInsideRoot('/a', undefined as never),
    'target',
  ],
  ['checkMemoryDirectory(null)', () => memory.checkMemoryDirectory(null as never), 'check'],
  [
    'checkMemoryDirectory cwd undefined',
    () => memory.checkMemoryDirectory({ scope: 'user', root: '/r', directory: '/r/a' } as never),
    'check.cwd',
  ],
  [
    'buildAgentMemoryPrompt(undefined)',
    () => memory.buildAgentMemoryPrompt(undefined as never),
    'parts',
  ],
  [
    'buildAgentMemoryPrompt index null',
    () =>
      memory.buildAgentMemoryPrompt({
        agentType: 'a',
        scope: 'user',
        directory: '/d',
        index: null as never,
        maxLines: 200,
      }),
    'parts.index',
  ],
  ['describeMemoryScope(42)', () => memory.describeMemoryScope(42 as never), 'scope'],
  [
    'readBoundedMemoryIndex file null',
    () => memory.readBoundedMemoryIndex(null as never, { maxLines: 1, maxBytes: 1 }),
    'file',
  ],
  [
    'readBoundedMemoryIndex limits 42',
    () => memory.readBoundedMemoryIndex('/x', 42 as never),
    'limits',
  ],
  [
    'readBoundedMemoryIndex maxBytes text',
    () => memory.readBoundedMemoryIndex('/x', { maxLines: 1, maxBytes: 'x' as never }),
    'limits.maxBytes',
  ],
];

describe('argument checks', () => {
  it.each(cases)('%s throws INVALID_ARGUMENT naming the argument', async (_label, call, option) => {
    const error = await thrown(call);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain(` ${option} must be `);
    expect(error.message).toMatch(/; got (null|undefined|an? .+)\.$/);
  });

  it('names the function in the message', async () => {
    expect((await thrown(() => memory.listMemory(null as never))).message).toBe(
      'listMemory(): options must be an object; got null.',
    );
  });

  it('still accepts valid input', () => {
    expect(memory.decodeAgentTypeFromPath('abc')).toBe('abc');
    expect(memory.describeMemoryScope('local')).toContain('local-scope');
    expect(memory.getAgentMemoryRoot('project', { cwd: '/p' })).toBe('/p/.claude/agent-memory');
  });
});
