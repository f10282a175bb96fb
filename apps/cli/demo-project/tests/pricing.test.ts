import assert from 'node:assert/strict';
import { test } from 'node:test';
import { priceCart } from '../src/core/pricing.js';

const context = { region: 'EU' as const, coupons: { TEN: { kind: 'percent' as const, percent: 10 } } };

test('bulk lines get 10% off', () => {
  const priced = priceCart(
    { id: 'c', items: [{ sku: 'ABC-0001', quantity: 10, unitPriceCents: 1000 }], createdAt: '' },
    context,
  );
  assert.deepEqual(priced.adjustments[0], { reason: 'bulk discount (10% off lines of 10+)', cents: -1000 });
});

test('shipping is free from 50.00 after discounts', () => {
  const priced = priceCart({ id: 'c', items: [{ sku: 'ABC-0001', quantity: 1, unitPriceCents: 6000 }], createdAt: '' }, context);
  assert.equal(priced.adjustments.length, 0);
});
