import { createHash, hkdfSync } from 'node:crypto';
import type { PaymentProvider, ProviderOrderRequest } from './port.ts';
import { paymentSignature, signatureMatches } from './port.ts';

/**
 * The embedded sandbox provider (the default while no real provider is configured): orders are
 * named from their receipt, and test payments are signed with a secret derived from the server
 * secret by the same formula a real provider uses, so the verify path is the production one.
 */
export class SandboxPaymentProvider implements PaymentProvider {
  readonly name = 'sandbox' as const;
  readonly #secret: string;

  constructor(serverSecret: string) {
    this.#secret = Buffer.from(hkdfSync('sha256', serverSecret, 'agent-network', 'sandbox-payments/v1', 32)).toString('hex');
  }

  createOrder(request: ProviderOrderRequest): Promise<{ order_id: string }> {
    const id = createHash('sha256').update(request.receipt).digest('base64url').replace(/[-_]/g, '').slice(0, 14);
    return Promise.resolve({ order_id: `order_sbx${id}` });
  }

  verifySignature(orderId: string, paymentId: string, signature: string): boolean {
    return signatureMatches(this.#secret, orderId, paymentId, signature);
  }

  /** A test payment of an order: what a real provider's checkout hands back to the browser. */
  pay(orderId: string, paymentId: string): { order_id: string; payment_id: string; signature: string } {
    return { order_id: orderId, payment_id: paymentId, signature: paymentSignature(this.#secret, orderId, paymentId) };
  }

  checkout() {
    return { provider: this.name, key_id: null };
  }
}
