/**
 * Consumer test: packs every workspace package from a clean build, installs the tarballs
 * into fresh npm projects outside the workspace, and uses them the way the READMEs say.
 * Any failing step fails the run (exit 1); the temporary folder is then kept for a look.
 *
 * Run it with `npx -y pnpm@12.4.2 consumer-test` (CI runs it from `.ci/run`). Set
 * `DELEGATE_CONSUMER_KEEP=1` to keep the temporary folder after a passing run too.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  apiSimBinChecks,
  runtimeTypeCheckSource,
  toolFilterScript,
  type BinCheck,
} from './consumer-test-fixtures.js';
import {
  extractReadmeExamples,
  readmeImportedPackages,
  readmeInstallGaps,
  readmeTypeCheckFiles,
} from './readme-examples.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const PUBLINT = 'publint@0.3.25';
/** A hang guard for one command (installs on a cold npm cache are the slowest). */
const COMMAND_TIMEOUT_MS = 15 * 60_000;

type WorkspacePackage = {
  name: string;
  version: string;
  dir: string;
  isPrivate: boolean;
  workspaceDependencies: string[];
  tarball: string;
};

type RunOptions = { cwd: string; env?: NodeJS.ProcessEnv; allowFailure?: boolean };
type RunResult = { code: number; stdout: string; stderr: string };

class StepError extends Error {
  override name = 'StepError';
}

function fail(message: string): never {
  throw new StepError(message);
}

function run(command: string, args: readonly string[], options: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const result = { code: code ?? 1, stdout, stderr };
      if (result.code === 0 || options.allowFailure) return resolve(result);
      const shown = `${command} ${args.join(' ')}`;
      reject(
        new StepError(
          `\`${shown}\` in ${options.cwd} failed (${signal ?? `exit ${result.code}`}).\n` +
            `--- stdout\n${stdout.slice(0, 8000)}\n--- stderr\n${stderr.slice(-4000)}`,
        ),
      );
    });
  });
}

/** The environment of a user's shell: no pnpm or npm script variables, no workspace bins. */
function consumerEnvironment(home?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|pnpm_)/i.test(key) || key.startsWith('ANTHROPIC_')) continue;
    env[key] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((entry) => !entry.startsWith(root))
    .join(delimiter);
  env.npm_config_update_notifier = 'false';
  env.npm_config_fund = 'false';
  env.npm_config_audit = 'false';
  if (home !== undefined) env.HOME = home;
  return env;
}

async function readJson<T>(path: string): Promise<T> {
  return JSON.parse(await readFile(path, 'utf8')) as T;
}

async function listWorkspacePackages(packsDir: string): Promise<WorkspacePackage[]> {
  const found: Array<{ dir: string; manifest: Record<string, unknown> }> = [];
  for (const group of ['packages', 'apps']) {
    if (!existsSync(join(root, group))) continue;
    for (const entry of (await readdir(join(root, group))).sort()) {
      const manifestPath = join(root, group, entry, 'package.json');
      if (existsSync(manifestPath)) {
        found.push({ dir: join(root, group, entry), manifest: await readJson(manifestPath) });
      }
    }
  }
  const names = new Set(found.map(({ manifest }) => String(manifest.name)));
  return found.map(({ dir, manifest }) => {
    const name = String(manifest.name);
    const version = String(manifest.version);
    const dependencies = Object.keys((manifest.dependencies ?? {}) as Record<string, string>);
    return {
      name,
      version,
      dir,
      isPrivate: manifest.private === true,
      workspaceDependencies: dependencies.filter((dependency) => names.has(dependency)),
      tarball: join(packsDir, `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`),
    };
  });
}

/** The tarballs of `names` and of every workspace package they depend on, directly or not. */
function tarballsFor(packages: readonly WorkspacePackage[], names: readonly string[]): string[] {
  const byName = new Map(packages.map((entry) => [entry.name, entry]));
  const wanted = new Set<string>();
  const visit = (name: string) => {
    if (wanted.has(name)) return;
    const entry = byName.get(name) ?? fail(`${name} is not a workspace package`);
    wanted.add(name);
    entry.workspaceDependencies.forEach(visit);
  };
  names.forEach(visit);
  return [...wanted].map((name) => byName.get(name)!.tarball);
}

async function packFromCleanBuild(packsDir: string): Promise<WorkspacePackage[]> {
  for (const group of ['packages', 'apps']) {
    if (!existsSync(join(root, group))) continue;
    for (const entry of await readdir(join(root, group))) {
      await rm(join(root, group, entry, 'dist'), { recursive: true, force: true });
    }
  }
  const env = {
    ...process.env,
    PATH: `${join(root, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}`,
  };
  await run('pnpm', ['-r', 'pack', '--pack-destination', packsDir], { cwd: root, env });
  const packages = await listWorkspacePackages(packsDir);
  for (const entry of packages) {
    if (!existsSync(entry.tarball)) fail(`pnpm -r pack made no ${entry.tarball} for ${entry.name}`);
  }
  return packages;
}

/** The files a package's manifest promises: its `.` export (code and types) and its bins. */
async function promisedFiles(entry: WorkspacePackage): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(entry.dir, 'package.json'), 'utf8')) as {
    exports?: Record<string, unknown>;
    bin?: string | Record<string, string>;
  };
  const files: string[] = [];
  const main = manifest.exports?.['.'];
  if (main && typeof main === 'object') {
    for (const key of ['import', 'types']) {
      const target = (main as Record<string, unknown>)[key];
      if (typeof target === 'string') files.push(target);
    }
  }
  const bins =
    typeof manifest.bin === 'string' ? [manifest.bin] : Object.values(manifest.bin ?? {});
  files.push(...bins);
  return files.map((file) => `package/${file.replace(/^\.\//, '')}`);
}

async function checkTarballContents(entry: WorkspacePackage): Promise<void> {
  const { stdout } = await run('tar', ['-tzf', entry.tarball], { cwd: root });
  const files = stdout.split('\n');
  const required = [...(await promisedFiles(entry)), 'package/README.md', 'package/LICENSE'];
  if (!required.some((file) => file.startsWith('package/dist/')))
    fail(`${entry.name} promises no file in dist`);
  for (const file of required) {
    if (!files.includes(file)) fail(`${entry.tarball} has no ${file.slice(8)}`);
  }
}

async function createProject(parent: string, name: string): Promise<string> {
  const dir = join(parent, name);
  await mkdir(dir, { recursive: true });
  const env = consumerEnvironment();
  await run('npm', ['init', '-y'], { cwd: dir, env });
  await run('npm', ['pkg', 'set', 'type=module'], { cwd: dir, env });
  return dir;
}

/** `npm install` in a consumer project; `dev` adds the specs as dev dependencies. */
async function npmInstall(project: string, install: { specs: readonly string[]; dev?: boolean }) {
  const args = [
    'install',
    '--no-audit',
    '--no-fund',
    ...(install.dev ? ['--save-dev'] : []),
    ...install.specs,
  ];
  await run('npm', args, { cwd: project, env: consumerEnvironment() });
}

/** Every @delegate package must come from a tarball: npm must not have found one elsewhere. */
async function assertLocalDelegatePackages(project: string, expected: readonly string[]) {
  const lock = await readJson<{ packages: Record<string, { resolved?: string }> }>(
    join(project, 'package-lock.json'),
  );
  const installed = Object.entries(lock.packages)
    .filter(([path]) => path.startsWith('node_modules/@delegate/'))
    .map(([path, entry]) => ({ name: path.slice('node_modules/'.length), entry }));
  for (const { name, entry } of installed) {
    if (!entry.resolved?.startsWith('file:')) {
      fail(`${name} in ${project} came from ${entry.resolved ?? 'nowhere'}, not a tarball`);
    }
  }
  const names = installed.map(({ name }) => name).sort();
  if (JSON.stringify(names) !== JSON.stringify([...expected].sort())) {
    fail(`${project} has @delegate packages ${names.join(', ')}; expected ${expected.join(', ')}`);
  }
}

async function toolFilterStep(work: string, packages: readonly WorkspacePackage[]) {
  const project = await createProject(work, 'tool-filter-consumer');
  const tarballs = tarballsFor(packages, ['@delegate/tool-filter']);
  await npmInstall(project, { specs: tarballs });
  await assertLocalDelegatePackages(project, ['@delegate/core', '@delegate/tool-filter']);
  await writeFile(join(project, 'check.mjs'), toolFilterScript);
  const { stdout } = await run('node', ['check.mjs'], { cwd: project, env: consumerEnvironment() });
  process.stdout.write(stdout);
}

async function runReadmeExample(project: string, home: string): Promise<void> {
  const readme = await readFile(join(root, 'packages', 'runtime', 'README.md'), 'utf8');
  const example =
    extractReadmeExamples(readme)[0] ??
    fail('packages/runtime/README.md has no ```ts example block');
  if (example.prints === undefined) {
    fail(
      'the first ```ts example of packages/runtime/README.md has no <!-- prints: … --> line after it',
    );
  }
  await writeFile(join(project, 'example.ts'), example.code);
  const { stdout } = await run('npx', ['tsx', 'example.ts'], {
    cwd: project,
    env: consumerEnvironment(home),
  });
  const prints = example.prints.join('\n');
  if (!stdout.includes(prints)) {
    fail(
      `the runtime README example printed ${JSON.stringify(stdout)}, not ${JSON.stringify(prints)}`,
    );
  }
  console.log(`  the runtime README's first example printed: ${prints}`);
}

async function checkBin(project: string, check: BinCheck): Promise<void> {
  for (const [file, content] of Object.entries(check.files)) {
    await writeFile(join(project, file), content);
  }
  const result = await run('npx', ['delegate-sim', ...check.args], {
    cwd: project,
    env: consumerEnvironment(),
    allowFailure: true,
  });
  const lines = result.stderr.trimEnd().split('\n');
  if (result.code !== 2 || lines.length !== 1 || !check.pattern.test(lines[0] ?? '')) {
    fail(
      `delegate-sim ${check.args.join(' ')} exited ${result.code} with ${JSON.stringify(result.stderr)};` +
        ` expected exit 2 and one line matching ${check.pattern}`,
    );
  }
  console.log(`  delegate-sim ${check.args.join(' ')} -> exit 2: ${lines[0]}`);
}

/** `delegate-sim` from the tarball serves a policy module that imports the installed package. */
async function checkBinServes(project: string): Promise<void> {
  await writeFile(
    join(project, 'policy.mjs'),
    "import { script } from '@delegate/api-sim';\nexport default script(['Hello from the tarball.']);\n",
  );
  const child = spawn('npx', ['delegate-sim', '--policy', 'policy.mjs'], {
    cwd: project,
    env: consumerEnvironment(),
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('\n')) resolve(output.split('\n')[0] ?? '');
      });
      child.on('exit', (code) =>
        reject(new StepError(`delegate-sim exited ${code} before printing its URL`)),
      );
    });
    const response = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sim' },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    });
    const body = (await response.json()) as { content?: Array<{ text?: string }> };
    if (body.content?.[0]?.text !== 'Hello from the tarball.') {
      fail(`delegate-sim at ${url} answered ${JSON.stringify(body)}`);
    }
    console.log(`  delegate-sim --policy policy.mjs served ${url}`);
  } finally {
    if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
  }
}

type TypeCheckOptions = { config: string; include: readonly string[]; exact: boolean };

async function typeCheck(project: string, { config: name, include, exact }: TypeCheckOptions) {
  const config = {
    compilerOptions: {
      target: 'ES2022',
      // No DOM: a browser global such as `parent` or `prompt` must not hide an undefined name.
      lib: ['ES2023'],
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      exactOptionalPropertyTypes: exact,
      noUncheckedIndexedAccess: true,
      types: ['node'],
      noEmit: true,
      skipLibCheck: true,
    },
    include,
  };
  await writeFile(join(project, name), `${JSON.stringify(config, null, 2)}\n`);
  await run('npx', ['tsc', '-p', name], { cwd: project, env: consumerEnvironment() });
  const what = include.length > 3 ? `${include.length} files` : include.join(', ');
  console.log(`  tsc -p ${name}: no errors (${what})`);
}

async function runtimeStep(work: string, packages: readonly WorkspacePackage[]) {
  const project = await createProject(work, 'runtime-consumer');
  const home = join(work, 'home');
  await mkdir(home, { recursive: true });
  const tarballs = tarballsFor(packages, ['@delegate/runtime', '@delegate/api-sim']);
  await npmInstall(project, { specs: tarballs });
  await installTypeScript(project, packages);
  await assertLocalDelegatePackages(
    project,
    packages.filter((entry) => tarballs.includes(entry.tarball)).map((entry) => entry.name),
  );
  await runReadmeExample(project, home);
  for (const check of apiSimBinChecks) await checkBin(project, check);
  await checkBinServes(project);
  await writeFile(join(project, 'consumer.ts'), runtimeTypeCheckSource);
  await typeCheck(project, {
    config: 'tsconfig.json',
    include: ['consumer.ts', 'example.ts'],
    exact: false,
  });
  await typeCheck(project, {
    config: 'tsconfig.exact.json',
    include: ['consumer.ts'],
    exact: true,
  });
}

/** `name@version` as the workspace pins it (root or any package), else the bare name. */
async function pinnedSpec(packages: readonly WorkspacePackage[], name: string): Promise<string> {
  for (const dir of [root, ...packages.map((entry) => entry.dir)]) {
    const manifest = await readJson<Record<string, Record<string, string> | undefined>>(
      join(dir, 'package.json'),
    );
    const version = manifest.dependencies?.[name] ?? manifest.devDependencies?.[name];
    if (version !== undefined && !version.startsWith('workspace:')) return `${name}@${version}`;
  }
  return name;
}

async function installTypeScript(project: string, packages: readonly WorkspacePackage[]) {
  const specs = [];
  for (const name of ['tsx', 'typescript', '@types/node'])
    specs.push(await pinnedSpec(packages, name));
  await npmInstall(project, { specs, dev: true });
}

async function readmeStep(work: string, packages: readonly WorkspacePackage[]) {
  const gaps = await readmeInstallGaps(root);
  if (gaps.length > 0) fail(gaps.join('\n'));
  const imported = await readmeImportedPackages(root);
  const workspaceNames = new Set(packages.map((entry) => entry.name));
  const project = await createProject(work, 'readme-consumer');
  const tarballs = tarballsFor(
    packages,
    imported.filter((name) => workspaceNames.has(name)),
  );
  await npmInstall(project, { specs: tarballs });
  const thirdParty = imported.filter(
    (name) => !workspaceNames.has(name) && !existsSync(join(project, 'node_modules', name)),
  );
  const extra = await Promise.all(thirdParty.map((name) => pinnedSpec(packages, name)));
  if (extra.length > 0) await npmInstall(project, { specs: extra });
  await installTypeScript(project, packages);
  const files = await readmeTypeCheckFiles(root);
  await mkdir(join(project, 'readme'), { recursive: true });
  for (const file of files) await writeFile(join(project, 'readme', file.name), file.code);
  // Every example is checked under exactOptionalPropertyTypes, as issue 15 asks.
  const include = files.map((file) => `readme/${file.name}`);
  await typeCheck(project, { config: 'tsconfig.json', include, exact: true });
}

async function cliStep(work: string, packages: readonly WorkspacePackage[]) {
  const project = await createProject(work, 'cli-consumer');
  const home = join(work, 'cli-home');
  await mkdir(home, { recursive: true });
  await npmInstall(project, { specs: tarballsFor(packages, ['@delegate/cli']) });
  const { stdout } = await run('npx', ['delegate', 'demo'], {
    cwd: project,
    env: consumerEnvironment(home),
  });
  process.stdout.write(stdout);
  for (const expected of [
    'a scripted policy stands in for the model',
    '3 workers as forks',
    'Forked workers cost',
  ]) {
    if (!stdout.includes(expected))
      throw new Error(`delegate demo from the tarball printed no "${expected}".`);
  }
}

async function step<T>(title: string, action: () => Promise<T>): Promise<T> {
  console.log(`== consumer: ${title}`);
  return action();
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'delegate-consumer-'));
  let passed = false;
  try {
    const packsDir = join(work, 'packs');
    await mkdir(packsDir);
    const packages = await step('pnpm -r pack from a clean build (prepack builds)', () =>
      packFromCleanBuild(packsDir),
    );
    const published = packages.filter((entry) => !entry.isPrivate);
    await step('every tarball ships dist, README and LICENSE', async () => {
      for (const entry of published) await checkTarballContents(entry);
    });
    await step(`publint (${PUBLINT}, --strict) on every tarball`, async () => {
      for (const entry of published) {
        await run('npx', ['-y', PUBLINT, 'run', entry.tarball, '--strict'], {
          cwd: work,
          env: consumerEnvironment(),
        });
      }
    });
    await step('@delegate/tool-filter alone in a fresh npm project', () =>
      toolFilterStep(work, packages),
    );
    await step('@delegate/runtime and @delegate/api-sim in a fresh npm project', () =>
      runtimeStep(work, packages),
    );
    await step(
      'package READMEs: install lines list what the examples import; every ts example type-checks',
      () => readmeStep(work, packages),
    );
    await step('@delegate/cli: delegate demo', () => cliStep(work, packages));
    passed = true;
    console.log('== consumer test passed');
  } finally {
    if (passed && process.env.DELEGATE_CONSUMER_KEEP !== '1')
      await rm(work, { recursive: true, force: true });
    else console.log(`  (temporary projects kept in ${work})`);
  }
}

main().catch((error: unknown) => {
  console.error(
    `== consumer test FAILED: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
});
