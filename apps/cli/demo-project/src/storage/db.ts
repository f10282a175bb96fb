import Database from 'better-sqlite3';

export const db = new Database(process.env.SHOP_DB ?? 'data/shop.db');
db.pragma('journal_mode = WAL');

export async function withTransaction<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    db.exec('BEGIN IMMEDIATE');
    try {
      const result = await work();
      db.exec('COMMIT');
      return result;
    } catch (error) {
      db.exec('ROLLBACK');
      const busy = (error as { code?: string }).code === 'SQLITE_BUSY';
      if (!busy || attempt >= 1) throw error;
    }
  }
}
