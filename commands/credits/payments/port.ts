import { createHmac, timingSafeEqual } from 'node:crypto';
import type { PaymentProviderName } from '../../../events/credits.ts';

/** What an order asks the provider for: the amount in minor units (paise) and our receipt id. */
export interface ProviderOrderRequest {
  /** Our stable id for the order (derived from the command id, so a retried request asks for the same one). */
  receipt: string;
  amount_minor: number;
  currency: 'INR';
  notes: Record<string, string>;
}

/**
 * The payment provider port: orders are created with the provider; a payment comes back as
 * `{order_id, payment_id, signature}` whose signature is HMAC-SHA256 of `order_id|payment_id`
 * under the provider's secret. Adapters: the embedded sandbox (default) and Razorpay.
 */
export interface PaymentProvider {
  readonly name: PaymentProviderName;
  /** Creates the order with the provider; the id it answers is the order id every later call uses. */
  createOrder(request: ProviderOrderRequest): Promise<{ order_id: string }>;
  /** True when `signature` is the provider's signature of `order_id|payment_id` (compared in constant time). */
  verifySignature(orderId: string, paymentId: string, signature: string): boolean;
  /** What the checkout page needs besides the order (the public key id of a real provider). */
  checkout(): { provider: PaymentProviderName; key_id: string | null };
}

/** The provider signature formula: lower-case hex HMAC-SHA256 of `order_id|payment_id`. */
export function paymentSignature(secret: string, orderId: string, paymentId: string): string {
  return createHmac('sha256', secret).update(`${orderId}|${paymentId}`, 'utf8').digest('hex');
}

/** Constant-time comparison of a presented signature with the expected one (any length or alphabet is just refused). */
export function signatureMatches(secret: string, orderId: string, paymentId: string, presented: string): boolean {
  const expected = Buffer.from(paymentSignature(secret, orderId, paymentId), 'utf8');
  const given = Buffer.from(presented, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
