import { randomBytes } from 'node:crypto';
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
