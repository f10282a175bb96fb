import { type Kysely, type Migration, type MigrationProvider, sql } from 'kysely';

/**
 * The store's schema migrations, in order. Names sort in the order they apply; a released
 * migration is never changed, a schema change is a new entry. Written with Kysely's schema
 * builder and portable types only, so a PostgreSQL store runs the same list.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_initial': {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('runs')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('prompt', 'text', (column) => column.notNull())
        .addColumn('options', 'text', (column) => column.notNull())
        .addColumn('workspace', 'text', (column) => column.notNull())
        .addColumn('session_id', 'text', (column) => column.notNull())
        .addColumn('transcript_dir', 'text', (column) => column.notNull())
        .addColumn('pending', 'text')
        .addColumn('result', 'text')
        .addColumn('error', 'text')
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('updated_at', 'text', (column) => column.notNull())
        .addColumn('started_at', 'text')
        .addColumn('ended_at', 'text')
        .execute();
      await db.schema
        .createIndex('runs_created_idx')
        .on('runs')
        .columns(['created_at', 'id'])
        .execute();
      await db.schema
        .createIndex('runs_status_created_idx')
        .on('runs')
        .columns(['status', 'created_at', 'id'])
        .execute();

      await db.schema
        .createTable('agents')
        .addColumn('run_id', 'text', (column) =>
          column.notNull().references('runs.id').onDelete('cascade'),
        )
        .addColumn('agent_id', 'text', (column) => column.notNull())
        .addColumn('position', 'integer', (column) => column.notNull())
        .addColumn('parent_agent_id', 'text')
        .addColumn('agent_type', 'text', (column) => column.notNull())
        .addColumn('description', 'text', (column) => column.notNull())
        .addColumn('mode', 'text', (column) => column.notNull())
        .addColumn('backgrounded', 'integer', (column) => column.notNull())
        .addColumn('model', 'text', (column) => column.notNull())
        .addColumn('color', 'text')
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('current_tool', 'text')
        .addColumn('last_activity', 'text')
        .addColumn('task_id', 'text')
        .addColumn('tool_use_count', 'integer', (column) => column.notNull())
        .addColumn('usage', 'text', (column) => column.notNull())
        .addColumn('cost_usd', 'double precision', (column) => column.notNull())
        .addColumn('priced', 'integer', (column) => column.notNull())
        .addColumn('transcript_path', 'text')
        .addColumn('started_at', 'text', (column) => column.notNull())
        .addColumn('ended_at', 'text')
        .addColumn('error', 'text')
        .addPrimaryKeyConstraint('agents_pk', ['run_id', 'agent_id'])
        .execute();

      await db.schema
        .createTable('tasks')
        .addColumn('run_id', 'text', (column) =>
          column.notNull().references('runs.id').onDelete('cascade'),
        )
        .addColumn('task_id', 'text', (column) => column.notNull())
        .addColumn('position', 'integer', (column) => column.notNull())
        .addColumn('agent_id', 'text')
        .addColumn('type', 'text', (column) => column.notNull())
        .addColumn('description', 'text', (column) => column.notNull())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('backgrounded', 'integer', (column) => column.notNull())
        .addColumn('started_at', 'text', (column) => column.notNull())
        .addColumn('ended_at', 'text')
        .addPrimaryKeyConstraint('tasks_pk', ['run_id', 'task_id'])
        .execute();

      await db.schema
        .createTable('events')
        .addColumn('run_id', 'text', (column) =>
          column.notNull().references('runs.id').onDelete('cascade'),
        )
        .addColumn('seq', 'integer', (column) => column.notNull())
        .addColumn('type', 'text', (column) => column.notNull())
        .addColumn('agent_id', 'text')
        .addColumn('time', 'text', (column) => column.notNull())
        .addColumn('data', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('events_pk', ['run_id', 'seq'])
        .execute();
      await db.schema
        .createIndex('events_type_idx')
        .on('events')
        .columns(['run_id', 'type', 'seq'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['events', 'tasks', 'agents', 'runs']) {
        await sql`drop table if exists ${sql.table(table)}`.execute(db);
      }
    },
  },
  '0002_transcripts': {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('transcripts')
        .addColumn('run_id', 'text', (column) =>
          column.notNull().references('runs.id').onDelete('cascade'),
        )
        .addColumn('file', 'text', (column) => column.notNull())
        .addColumn('byte_offset', 'integer', (column) => column.notNull())
        .addColumn('content', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('transcripts_pk', ['run_id', 'file', 'byte_offset'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await sql`drop table if exists transcripts`.execute(db);
    },
  },
};

/** Hands `MIGRATIONS` to Kysely's `Migrator` (no migration files to find at run time). */
export const migrationProvider: MigrationProvider = {
  getMigrations: async () => ({ ...MIGRATIONS }),
};
