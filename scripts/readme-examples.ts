/**
 * Reads the TypeScript examples out of the package READMEs, so the consumer test runs and
 * type-checks them as they are written (a README that changes is tested as it now reads).
 */
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';

/**
 * A runnable README example (a ```ts example block), the line its code starts on, and the
 * lines it says it prints (`<!-- prints: … -->` right after it, one printed line per line).
 */
export type ReadmeExample = { code: string; line: number; prints: string[] | undefined };

/** One README code block written as a module for the type check. */
export type ReadmeTypeCheckFile = { name: string; code: string };

const FENCE = /^```(ts|typescript)\b([^\n]*)\n([\s\S]*?)^```[ \t]*$/gm;
const PRINTS = /^\s*<!-- prints:([\s\S]*?)-->/;

/** One ```ts block of a README: its info string after `ts`, its code and its first line. */
export type ReadmeBlock = { info: string; code: string; line: number };

/** Every ```ts (or ```typescript) block of a README, in order. */
export function extractReadmeBlocks(readme: string): ReadmeBlock[] {
  return [...readme.matchAll(FENCE)].map((match) => ({
    info: (match[2] ?? '').trim(),
    code: match[3] ?? '',
    // The code starts on the line after the fence.
    line: readme.slice(0, match.index).split('\n').length + 1,
  }));
}

/** The ```ts example blocks of a README in order, each with its `<!-- prints: … -->` lines. */
export function extractReadmeExamples(readme: string): ReadmeExample[] {
  const examples: ReadmeExample[] = [];
  for (const match of readme.matchAll(FENCE)) {
    if (!/\bexample\b/.test(match[2] ?? '')) continue;
    const after = readme.slice((match.index ?? 0) + match[0].length);
    const prints = PRINTS.exec(after)?.[1]
      ?.split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    examples.push({
      code: match[3] ?? '',
      line: readme.slice(0, match.index).split('\n').length + 1,
      prints,
    });
  }
  return examples;
}

const IMPORT = /\bfrom\s+'([^']+)'|\bimport\s+'([^']+)'/g;
const INSTALL = /^npm install (.+)$/gm;

/** The package a bare import specifier names (`@scope/name/sub` → `@scope/name`). */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || isBuiltin(specifier))
    return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

type Readme = { id: string; group: string; folder: string; text: string };

async function listReadmes(root: string): Promise<Readme[]> {
  const readmes: Readme[] = [];
  for (const group of ['packages', 'apps']) {
    if (!existsSync(join(root, group))) continue;
    for (const folder of (await readdir(join(root, group))).sort()) {
      const path = join(root, group, folder, 'README.md');
      if (!existsSync(path)) continue;
      readmes.push({ id: `${group}/${folder}`, group, folder, text: await readFile(path, 'utf8') });
    }
  }
  return readmes;
}

function importedPackages(readme: string): Set<string> {
  const imported = new Set<string>();
  for (const block of readme.matchAll(FENCE)) {
    for (const [, from, bare] of (block[3] ?? '').matchAll(IMPORT)) {
      const name = packageOf(from ?? bare ?? '');
      if (name !== undefined) imported.add(name);
    }
  }
  return imported;
}

function installedPackages(readme: string): Set<string> {
  const installed = new Set<string>();
  for (const [, line] of readme.matchAll(INSTALL)) {
    const words = (line ?? '').split(/\s+/);
    if (words.includes('-D') || words.includes('--save-dev')) continue;
    words.filter((word) => !word.startsWith('-')).forEach((word) => installed.add(word));
  }
  return installed;
}

/** Every package that some package README's TypeScript examples import. */
export async function readmeImportedPackages(root: string): Promise<string[]> {
  const all = new Set<string>();
  for (const readme of await listReadmes(root))
    importedPackages(readme.text).forEach((name) => all.add(name));
  return [...all].sort();
}

/**
 * For each package README, the packages its TypeScript examples import that its
 * `npm install …` lines do not list (dev installs with `-D` do not count).
 */
export async function readmeInstallGaps(root: string): Promise<string[]> {
  const gaps: string[] = [];
  for (const readme of await listReadmes(root)) {
    const installed = installedPackages(readme.text);
    const missing = [...importedPackages(readme.text)].filter((name) => !installed.has(name));
    if (missing.length > 0) {
      gaps.push(
        `${readme.id}/README.md: the examples import ${missing.join(', ')}, which no \`npm install\` line lists`,
      );
    }
  }
  return gaps;
}

/** Every ```ts block of every package README, as `<package>-<n>.ts` modules. */
export async function readmeTypeCheckFiles(root: string): Promise<ReadmeTypeCheckFile[]> {
  const files: ReadmeTypeCheckFile[] = [];
  for (const readme of await listReadmes(root)) {
    let index = 0;
    for (const match of readme.text.matchAll(FENCE)) {
      index += 1;
      files.push({
        name: `${readme.group}-${readme.folder}-${index}.ts`,
        // `export {}` makes a block without imports a module too (top-level await, own scope).
        code: `${match[3] ?? ''}\nexport {};\n`,
      });
    }
  }
  return files;
}
