import { addItem, checkout, removeItem } from '../core/cart.js';
import { priceCart } from '../core/pricing.js';
import { loadCart, saveCart } from '../storage/orders.js';
import { withTransaction } from '../storage/db.js';
import { AddItemBody, CheckoutBody, RemoveItemBody } from './validate.js';
import { toHttpError } from './errors.js';

export type Route = {
  method: 'GET' | 'POST' | 'DELETE';
  path: RegExp;
  handle: (params: string[], body: unknown) => Promise<{ status: number; body: unknown }>;
};

export const routes: Route[] = [
  {
    method: 'GET',
    path: /^\/carts\/([\w-]+)$/,
    handle: async ([cartId]) => {
      const cart = await loadCart(cartId!);
      return { status: 200, body: priceCart(cart, { region: 'EU', coupons: {} }) };
    },
  },
  {
    method: 'POST',
    path: /^\/carts\/([\w-]+)\/items$/,
    handle: async ([cartId], body) => {
      const item = AddItemBody.parse(body);
      return withTransaction(async () => {
        const cart = addItem(await loadCart(cartId!), item);
        await saveCart(cart);
        return { status: 200, body: cart };
      });
    },
  },
  {
    method: 'DELETE',
    path: /^\/carts\/([\w-]+)\/items\/([\w-]+)$/,
    handle: async ([cartId, sku]) => {
      RemoveItemBody.parse({ sku });
      return withTransaction(async () => {
        const cart = removeItem(await loadCart(cartId!), sku!);
        await saveCart(cart);
        return { status: 200, body: cart };
      });
    },
  },
  {
    method: 'POST',
    path: /^\/carts\/([\w-]+)\/checkout$/,
    handle: async ([cartId], body) => {
      const { paymentToken } = CheckoutBody.parse(body);
      // TODO: make checkout idempotent per payment token (a retried request charges twice today).
      try {
        return { status: 201, body: await checkout(await loadCart(cartId!), paymentToken) };
      } catch (error) {
        return toHttpError(error);
      }
    },
  },
];
