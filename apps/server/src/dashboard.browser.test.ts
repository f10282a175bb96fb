import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { type AddressInfo, type Socket, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gates, scenarioPolicy } from './__fixtures__/scenario-policy.js';
import { TEST_TOKEN, type TestServer, startTestServer } from './__fixtures__/test-server.js';

const CHROMIUM = '/usr/bin/chromium';

/** A TCP proxy in front of the server whose connections the test can cut. */
async function startProxy(port: number) {
  const sockets = new Set<Socket>();
  let dropped = 0;
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get dropped() {
      return dropped;
    },
    dropConnections() {
      dropped += sockets.size;
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
const results = fileURLToPath(new URL('../test-results/', import.meta.url));

// Skipped on a machine without chromium, but never in CI (.ci/run installs it).
describe.skipIf(!existsSync(CHROMIUM) && process.env.CI !== 'true')(
  'dashboard in a real browser',
  () => {
    const gates = new Gates();
    let test: TestServer;
    let context: BrowserContext;
    let profile: string;
    let proxy: Awaited<ReturnType<typeof startProxy>>;

    beforeAll(async () => {
      test = await startTestServer({ policy: scenarioPolicy(gates), pacing: { msPerToken: 2 } });
      proxy = await startProxy(test.server.port);
      profile = await mkdtemp(join(tmpdir(), 'delegate-chromium-'));
      context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: [
          '--no-sandbox',
          '--disable-background-networking',
          '--disable-gpu',
          '--disable-dev-shm-usage',
        ],
        viewport: { width: 1280, height: 900 },
      });
    }, 120_000);
    afterAll(async () => {
      gates.openAll();
      await context?.close();
      await proxy?.close();
      await test?.close();
      await rm(profile, { recursive: true, force: true });
    });

    it('shows the agent tree growing, cancels an agent, and keeps the token for the tab', async () => {
      const page = context.pages()[0] ?? (await context.newPage());
      const problems: string[] = [];
      // Script errors and CSP violations; failed requests are checked one by one below.
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
          problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      const failed: string[] = [];
      page.on('response', (response) => {
        if (response.status() >= 400)
          failed.push(`${response.status()} ${new URL(response.url()).pathname}`);
      });

      await page.goto(proxy.url);
      await page.fill('input[name=token]', 'not-the-token-at-all');
      await page.click('button[type=submit]');
      await page.waitForSelector('text=The server refused the token');
      await page.fill('input[name=token]', TEST_TOKEN);
      await page.click('button[type=submit]');

      await page.fill('textarea[name=prompt]', 'scenario:tree Audit the project');
      await page.click('form[aria-label="New run"] button[type=submit]');

      // The tree grows to the main agent, two forks and the background survey.
      await page.locator('.agent[data-agent-id]').nth(3).waitFor({ timeout: 60_000 });
      expect(await page.locator('.agent[data-agent-id]').count()).toBe(4);
      const types = await page.$$eval('.agent[data-agent-id]', (nodes) =>
        nodes.map((node) => node.getAttribute('data-type')),
      );
      expect(types.sort()).toEqual(['fork', 'fork', 'general-purpose', 'main']);
      await page.waitForSelector('.agent[data-type=fork][data-status=completed]');
      const survey = '.agent[data-type=general-purpose]';
      await page.waitForSelector(`${survey}[data-status=running] button.cancel`);
      expect(await page.textContent(`${survey} .mode`)).toBe('background');
      expect(await page.textContent('.agent[data-type=fork] .cost')).toMatch(/^\$\d/);
      expect(await page.$$('.agent[data-type=fork] .bar .read')).toHaveLength(2);

      // The event stream drops and comes back: the page reconnects with Last-Event-ID.
      await page.waitForSelector('.connection:has-text("live")');
      const reconnect = page.waitForRequest(
        (request) =>
          request.url().includes('/events') && request.headers()['last-event-id'] !== undefined,
        { timeout: 60_000 },
      );
      proxy.dropConnections();
      const again = await reconnect;
      expect(Number(again.headers()['last-event-id'])).toBeGreaterThan(0);
      await page.waitForSelector('.connection:has-text("live")', { timeout: 60_000 });
      expect(proxy.dropped).toBeGreaterThan(0);

      await page.click(`${survey} button.cancel`);
      await page.waitForSelector(`${survey}[data-status=cancelled]`, { timeout: 60_000 });
      await page.waitForSelector('.run-status.status-completed', { timeout: 60_000 });

      await page.click('.agent[data-type=fork]');
      await page.locator('.transcript', { hasText: 'Fork report on:' }).waitFor();

      await mkdir(results, { recursive: true });
      await page.screenshot({ path: join(results, 'dashboard.png'), fullPage: true });

      // A second run: its foreground agent is moved to the background from the tree.
      await page.fill('textarea[name=prompt]', 'scenario:fg Work in the foreground');
      await page.click('form[aria-label="New run"] button[type=submit]');
      const foreground = '.agent[data-type=general-purpose][data-status=running]';
      await page.locator(`${foreground} button.background`).waitFor({ timeout: 60_000 });
      expect(await page.textContent(`${foreground} .mode`)).toBe('foreground');
      await page.click(`${foreground} button.background`);
      await page
        .locator('.agent[data-type=general-purpose] .mode', { hasText: 'foreground → background' })
        .waitFor({ timeout: 60_000 });
      gates.open('fg');
      await page.locator('.run-status.status-completed').waitFor({ timeout: 60_000 });

      // Typed by hand: this file is compiled without the DOM library.
      const stored = await page.evaluate(() =>
        (
          globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }
        ).sessionStorage.getItem('delegate-server-token'),
      );
      expect(stored).toBe(TEST_TOKEN);
      await page.reload();
      await page.waitForSelector('form[aria-label="New run"]');
      expect(await page.$('input[name=token]')).toBeNull();
      expect(problems).toEqual([]);
      // Only the refused token, and transcripts asked for before their first line was written.
      for (const failure of failed)
        expect(failure).toMatch(/^401 |^404 \/v1\/runs\/run_\w+\/transcript$/);
      // After the reconnect every event arrived once, in order.
      const seqs = await page.$$eval('.log div', (lines) =>
        lines.map((line) => Number(line.textContent?.match(/^#(\d+)/)?.[1])),
      );
      expect(seqs).toEqual(seqs.map((_, index) => seqs[0]! + index));
    }, 120_000);

    it('follows a run again once it is resumed after its stream ended', async () => {
      const page = context.pages()[0] ?? (await context.newPage());
      await page.goto(proxy.url);
      await page.waitForSelector('form[aria-label="New run"]');
      await page.fill('textarea[name=prompt]', 'scenario:hold Wait for the gate');
      await page.click('form[aria-label="New run"] button[type=submit]');
      await page.waitForSelector('.run-status.status-running', { timeout: 60_000 });
      await page.click('button.cancel-run');
      await page.waitForSelector('.run-status.status-cancelled', { timeout: 60_000 });
      await page.waitForSelector('.connection:has-text("ended")', { timeout: 60_000 });

      await page.click('button:has-text("Resume")');
      // Live again, without a reload: the page asked for the events after the last it had.
      await page.waitForSelector('.connection:has-text("live")', { timeout: 60_000 });
      await page.waitForSelector('.run-status.status-running', { timeout: 60_000 });
      gates.open('hold');
      await page.waitForSelector('.run-status.status-completed', { timeout: 60_000 });
      await page.waitForSelector('.connection:has-text("ended")', { timeout: 60_000 });
      const seqs = await page.$$eval('.log div', (lines) =>
        lines.map((line) => Number(line.textContent?.match(/^#(\d+)/)?.[1])),
      );
      // Every event once, in order, across the two turns.
      expect(seqs).toEqual(seqs.map((_, index) => seqs[0]! + index));
      expect(await page.textContent('.log')).toContain('run.status · completed');
    }, 120_000);
  },
);
