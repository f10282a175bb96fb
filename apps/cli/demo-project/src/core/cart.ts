import { reserveStock } from './inventory.js';
import { ShopError } from './shop-error.js';

export type Cents = number;
export type CartItem = { sku: string; quantity: number; unitPriceCents: Cents };
export type Cart = { id: string; items: CartItem[]; coupon?: string; createdAt: string };

const MAX_QUANTITY = 99;

export function addItem(cart: Cart, item: CartItem): Cart {
  const existing = cart.items.find((line) => line.sku === item.sku);
  const quantity = (existing?.quantity ?? 0) + item.quantity;
  if (quantity > MAX_QUANTITY) {
    throw new ShopError('QUANTITY_LIMIT', `At most ${MAX_QUANTITY} units of ${item.sku} per cart.`);
  }
  const items = existing
    ? cart.items.map((line) => (line.sku === item.sku ? { ...line, quantity } : line))
    : [...cart.items, item];
  return { ...cart, items };
}

export function removeItem(cart: Cart, sku: string): Cart {
  if (!cart.items.some((line) => line.sku === sku)) {
    throw new ShopError('NOT_FOUND', `${sku} is not in cart ${cart.id}.`);
  }
  return { ...cart, items: cart.items.filter((line) => line.sku !== sku) };
}

export async function checkout(cart: Cart, paymentToken: string) {
  if (cart.items.length === 0) throw new ShopError('VALIDATION', 'The cart is empty.');
  const reservations = cart.items.map((line) => reserveStock(line.sku, line.quantity));
  // TODO: charge the payment token through the provider; today every checkout is marked paid.
  return { cartId: cart.id, paymentToken: `${paymentToken.slice(0, 4)}…`, reservations, status: 'paid' };
}
