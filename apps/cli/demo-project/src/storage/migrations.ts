import { db } from './db.js';

const MIGRATIONS = [
  `CREATE TABLE carts (id TEXT PRIMARY KEY, items TEXT NOT NULL, coupon TEXT, created_at TEXT NOT NULL)`,
  `CREATE TABLE orders (id TEXT PRIMARY KEY, cart_id TEXT NOT NULL REFERENCES carts(id), total_cents INTEGER NOT NULL, status TEXT NOT NULL)`,
  // TODO: index orders by cart_id once the order history route exists.
];

db.exec('CREATE TABLE IF NOT EXISTS migrations (id INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
const applied = new Set((db.prepare('SELECT id FROM migrations').all() as { id: number }[]).map((row) => row.id));
MIGRATIONS.forEach((sql, index) => {
  if (applied.has(index)) return;
  db.exec(sql);
  db.prepare('INSERT INTO migrations (id, applied_at) VALUES (?, ?)').run(index, new Date().toISOString());
});
