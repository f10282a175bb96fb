import type { Cart, Cents } from './cart.js';

export type PriceContext = { region: 'EU' | 'US' | 'UK'; coupons: Record<string, Coupon> };
export type Coupon = { kind: 'percent'; percent: number } | { kind: 'fixed'; cents: Cents };
export type Adjustment = { reason: string; cents: Cents };
export type PricedCart = { subtotal: Cents; adjustments: Adjustment[]; tax: Cents; total: Cents };

const TAX_RATE = { EU: 0.2, US: 0.07, UK: 0.2 } as const;
const FREE_SHIPPING_FROM: Cents = 5000;
const SHIPPING: Cents = 490;

type Rule = (cart: Cart, context: PriceContext, running: Cents) => Adjustment | undefined;

const bulkDiscount: Rule = (cart) => {
  const cents = cart.items
    .filter((line) => line.quantity >= 10)
    .reduce((sum, line) => sum + Math.round(line.quantity * line.unitPriceCents * 0.1), 0);
  return cents > 0 ? { reason: 'bulk discount (10% off lines of 10+)', cents: -cents } : undefined;
};

const couponDiscount: Rule = (cart, context, running) => {
  const coupon = cart.coupon ? context.coupons[cart.coupon] : undefined;
  if (!coupon) return undefined;
  const cents = coupon.kind === 'percent' ? Math.round((running * coupon.percent) / 100) : coupon.cents;
  return { reason: `coupon ${cart.coupon}`, cents: -Math.min(cents, running) };
};

const shipping: Rule = (_cart, _context, running) =>
  running >= FREE_SHIPPING_FROM ? undefined : { reason: 'shipping', cents: SHIPPING };

// The order matters: percentages before fixed amounts, shipping on the discounted total.
const RULES: Rule[] = [bulkDiscount, couponDiscount, shipping];

export function priceCart(cart: Cart, context: PriceContext): PricedCart {
  const subtotal = cart.items.reduce((sum, line) => sum + line.quantity * line.unitPriceCents, 0);
  const adjustments: Adjustment[] = [];
  let running = subtotal;
  for (const rule of RULES) {
    const adjustment = rule(cart, context, running);
    if (adjustment) {
      adjustments.push(adjustment);
      running += adjustment.cents;
    }
  }
  // FIXME: tax is rounded on the total, but docs/architecture.md says per line (half-even).
  const tax = Math.round(running * TAX_RATE[context.region]);
  return { subtotal, adjustments, tax, total: running + tax };
}
