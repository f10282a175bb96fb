import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { App } from '../app-context.js';

/** The dashboard's folder: `public/` beside `src/` (tests) or beside `dist/` (installed). */
function publicDirectory(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, '..', '..', '..', 'public'), join(here, '..', 'public')]) {
    if (existsSync(join(candidate, 'index.html'))) return candidate;
  }
  return join(here, '..', 'public');
}

function preactStandalone(): string {
  // htm's package exports have no "./package.json"; its main file sits in dist/.
  const main = createRequire(import.meta.url).resolve('htm');
  return join(dirname(main), '..', 'preact', 'standalone.module.js');
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * Serves the dashboard: a fixed list of files (no path from the request reaches the file
 * system), with Preact and htm served from the installed `htm` package.
 */
export function registerDashboardRoutes(app: App): void {
  const directory = publicDirectory();
  const files: Record<string, string> = {
    '/': join(directory, 'index.html'),
    '/index.html': join(directory, 'index.html'),
    '/app.js': join(directory, 'app.js'),
    '/app.css': join(directory, 'app.css'),
    '/vendor/preact-htm.js': preactStandalone(),
  };
  for (const [route, path] of Object.entries(files)) {
    const extension = path.slice(path.lastIndexOf('.'));
    app.get(route, async (c) => {
      const body = await readFile(path, 'utf8');
      return c.body(body, 200, {
        'content-type': TYPES[extension] ?? 'application/octet-stream',
        'cache-control': 'no-cache',
      });
    });
  }
}
