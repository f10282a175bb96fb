import type { Cart } from '../core/cart.js';
import { ShopError } from '../core/shop-error.js';
import { db } from './db.js';

export async function loadCart(id: string): Promise<Cart> {
  const row = db.prepare('SELECT id, items, coupon, created_at FROM carts WHERE id = ?').get(id) as
    | { id: string; items: string; coupon: string | null; created_at: string }
    | undefined;
  if (!row) throw new ShopError('NOT_FOUND', `No cart ${id}.`);
  return {
    id: row.id,
    items: JSON.parse(row.items),
    createdAt: row.created_at,
    ...(row.coupon ? { coupon: row.coupon } : {}),
  };
}

export async function saveCart(cart: Cart): Promise<void> {
  db.prepare('INSERT OR REPLACE INTO carts (id, items, coupon, created_at) VALUES (?, ?, ?, ?)').run(
    cart.id,
    JSON.stringify(cart.items),
    cart.coupon ?? null,
    cart.createdAt,
  );
}
