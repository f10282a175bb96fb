import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addItem, removeItem } from '../src/core/cart.js';

const empty = { id: 'c1', items: [], createdAt: '2026-01-01T00:00:00Z' };

test('addItem merges lines with the same SKU', () => {
  const cart = addItem(addItem(empty, { sku: 'ABC-0001', quantity: 2, unitPriceCents: 500 }), {
    sku: 'ABC-0001',
    quantity: 3,
    unitPriceCents: 500,
  });
  assert.equal(cart.items.length, 1);
  assert.equal(cart.items[0]?.quantity, 5);
});

test('addItem refuses more than 99 units', () => {
  assert.throws(() => addItem(empty, { sku: 'ABC-0001', quantity: 100, unitPriceCents: 1 }), /At most 99/);
});

test('removeItem refuses a SKU that is not in the cart', () => {
  assert.throws(() => removeItem(empty, 'ABC-0001'), /not in cart/);
});
