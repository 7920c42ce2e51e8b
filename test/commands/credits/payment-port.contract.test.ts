import { expect } from 'chai';
import type Razorpay from 'razorpay';
import type { PaymentProvider } from '../../../commands/credits/payments/port.ts';
import { paymentSignature } from '../../../commands/credits/payments/port.ts';
import { RazorpayPaymentProvider } from '../../../commands/credits/payments/razorpay.ts';
import { SandboxPaymentProvider } from '../../../commands/credits/payments/sandbox.ts';

/** A Razorpay client that answers orders.create as the API does (no network): the SDK's types, a stub behind them. */
function stubRazorpay(created: unknown[]): Razorpay {
  let n = 0;
  const orders = {
    create: (params: { amount: number; currency: string; receipt?: string }) => {
      created.push(params);
      return Promise.resolve({
        id: `order_Rzp${++n}`,
        entity: 'order',
        amount: params.amount,
        currency: params.currency,
        receipt: params.receipt,
        status: 'created',
      });
    },
  };
  return { orders } as unknown as Razorpay;
}

interface Adapter {
  name: string;
  provider: PaymentProvider;
  /** What the provider's checkout hands back for a paid order. */
  pay(orderId: string, paymentId: string): string;
}

const SECRET = 'rzp_secret_for_tests';
const created: unknown[] = [];
const sandbox = new SandboxPaymentProvider('test-server-secret-0123456789-abcdef');
const adapters: Adapter[] = [
  { name: 'sandbox', provider: sandbox, pay: (o, p) => sandbox.pay(o, p).signature },
  { name: 'razorpay', provider: new RazorpayPaymentProvider('rzp_test_abc', SECRET, stubRazorpay(created)), pay: (o, p) => paymentSignature(SECRET, o, p) },
];

for (const a of adapters) {
  describe(`payment provider port contract: ${a.name}`, () => {
    it('creates an order for the amount and answers its id', async () => {
      const { order_id } = await a.provider.createOrder({ receipt: 'ord_receipt1', amount_minor: 25_000, currency: 'INR', notes: { kind: 'topup' } });
      expect(order_id).to.match(/^order_/);
      expect(a.provider.checkout().provider).to.equal(a.name);
    });

    it('accepts the signature of order_id|payment_id, and refuses another order, payment or an altered signature', async () => {
      const { order_id } = await a.provider.createOrder({ receipt: 'ord_receipt2', amount_minor: 90_000, currency: 'INR', notes: {} });
      const sig = a.pay(order_id, 'pay_1');
      expect(a.provider.verifySignature(order_id, 'pay_1', sig)).to.equal(true);
      expect(a.provider.verifySignature(order_id, 'pay_2', sig)).to.equal(false);
      expect(a.provider.verifySignature('order_other', 'pay_1', sig)).to.equal(false);
      expect(a.provider.verifySignature(order_id, 'pay_1', sig.toUpperCase())).to.equal(false);
      expect(a.provider.verifySignature(order_id, 'pay_1', '')).to.equal(false);
    });
  });
}

describe('payment provider: razorpay adapter', () => {
  it('asks Razorpay for the amount in paise with our receipt (at most 40 characters)', () => {
    expect(created[0]).to.deep.include({ amount: 25_000, currency: 'INR', receipt: 'ord_receipt1' });
  });
});
