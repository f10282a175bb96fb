import { ShopError } from '../core/shop-error.js';

const STATUS: Record<string, number> = {
  NOT_FOUND: 404,
  VALIDATION: 400,
  QUANTITY_LIMIT: 400,
  OUT_OF_STOCK: 409,
};

export function toHttpError(error: unknown): { status: number; body: unknown } {
  if (error instanceof ShopError) {
    return { status: STATUS[error.code] ?? 500, body: { code: error.code, message: error.message } };
  }
  return { status: 500, body: { code: 'INTERNAL', message: 'Something went wrong.' } };
}
