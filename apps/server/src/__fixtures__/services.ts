import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import pg from 'pg';

/** PostgreSQL server the tests use (trust authentication on loopback). */
export const TEST_POSTGRES_URL =
  process.env.DELEGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Redis server the tests use. */
export const TEST_REDIS_URL = process.env.DELEGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A database of its own for one test file; `drop` removes it (ends its connections first). */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `delegate_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A Redis key prefix of its own for one test. */
export function testRedisPrefix(): string {
  return `delegate-test-${randomBytes(6).toString('hex')}`;
}

/** Whether a TCP server answers at `url`'s host and port within a second. */
function answers(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || defaultPort) });
    const done = (up: boolean): void => {
      socket.destroy();
      resolve(up);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Whether the PostgreSQL and Redis servers of the scale-out tests answer. Without them those
 * tests are skipped (with a note), so `pnpm test` works on a machine with only Node.js; CI
 * sets `DELEGATE_TEST_SERVICES=required`, and then a missing server is an error instead.
 */
export async function probeTestServices(): Promise<{ postgres: boolean; redis: boolean }> {
  const [postgres, redis] = await Promise.all([
    answers(TEST_POSTGRES_URL, 5432),
    answers(TEST_REDIS_URL, 6379),
  ]);
  const missing = [
    ...(postgres ? [] : [`PostgreSQL at ${new URL(TEST_POSTGRES_URL).host}`]),
    ...(redis ? [] : [`Redis at ${new URL(TEST_REDIS_URL).host}`]),
  ];
  if (missing.length > 0) {
    const required = process.env.DELEGATE_TEST_SERVICES === 'required';
    const message = `${missing.join(' and ')} did not answer: ${required ? 'DELEGATE_TEST_SERVICES=required makes that an error' : `the scale-out tests that need ${missing.length > 1 ? 'them' : 'it'} are skipped`}. \`bash apps/server/ci-services.sh\` starts both (or set DELEGATE_TEST_POSTGRES_URL / DELEGATE_TEST_REDIS_URL).`;
    if (required) throw new Error(message);
    process.stderr.write(`${message}\n`);
  }
  return { postgres, redis };
}
