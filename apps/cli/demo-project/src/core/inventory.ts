import { ShopError } from './shop-error.js';

export type Reservation = { sku: string; quantity: number; expiresAt: number };

const RESERVATION_MS = 15 * 60 * 1000;
const stock = new Map<string, number>();
const reservations: Reservation[] = [];

export function setStock(sku: string, quantity: number): void {
  stock.set(sku, quantity);
}

export function available(sku: string, now = Date.now()): number {
  const held = reservations
    .filter((reservation) => reservation.sku === sku && reservation.expiresAt > now)
    .reduce((sum, reservation) => sum + reservation.quantity, 0);
  return (stock.get(sku) ?? 0) - held;
}

export function reserveStock(sku: string, quantity: number, now = Date.now()): Reservation {
  if (available(sku, now) < quantity) throw new ShopError('OUT_OF_STOCK', `Not enough ${sku} in stock.`);
  const reservation = { sku, quantity, expiresAt: now + RESERVATION_MS };
  reservations.push(reservation);
  // TODO: a sweeper job should release expired reservations; until then this array only grows.
  return reservation;
}
