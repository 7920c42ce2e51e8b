import Razorpay from 'razorpay';
import type { PaymentProvider, ProviderOrderRequest } from './port.ts';
import { signatureMatches } from './port.ts';

/** Razorpay through its official SDK (RAZORPAY_KEY_ID, RAZORPAY_KEY_SECRET). */
export class RazorpayPaymentProvider implements PaymentProvider {
  readonly name = 'razorpay' as const;
  readonly #client: Razorpay;
  readonly #secret: string;

  constructor(
    private readonly keyId: string,
    keySecret: string,
    client?: Razorpay,
  ) {
    this.#secret = keySecret;
    this.#client = client ?? new Razorpay({ key_id: keyId, key_secret: keySecret });
  }

  async createOrder(request: ProviderOrderRequest): Promise<{ order_id: string }> {
    // Razorpay receipts are at most 40 characters.
    const order = await this.#client.orders.create({
      amount: request.amount_minor,
      currency: request.currency,
      receipt: request.receipt.slice(0, 40),
      notes: request.notes,
    });
    return { order_id: order.id };
  }

  verifySignature(orderId: string, paymentId: string, signature: string): boolean {
    return signatureMatches(this.#secret, orderId, paymentId, signature);
  }

  checkout() {
    return { provider: this.name, key_id: this.keyId };
  }
}
