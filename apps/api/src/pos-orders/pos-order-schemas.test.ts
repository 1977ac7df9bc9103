import { createParser } from '../http/validation';
import { OpenPosOrderRequest } from './pos-order-schemas';

const ID = '3F2504E0-4F89-41D3-9A0C-0305E82C3301';
const id = ID.toLowerCase();

describe('OpenPosOrderRequest parsing', () => {
  it('when the lines name a wallet, a plan and customers in upper case, then every id comes out lower-cased', () => {
    const parsed = createParser(OpenPosOrderRequest)({
      shift_id: ID,
      currency: 'EUR',
      lines: [
        { type: 'product', sku: 'CAP-RED', description: 'Cap', quantity: 1, unit_price_cents: 900 },
        { type: 'wallet_load', wallet_id: ID, amount_cents: 500 },
        { type: 'membership', plan_id: ID, customer_id: ID, holder_customer_id: ID },
      ],
    });
    expect(parsed).toEqual({
      shift_id: id,
      currency: 'EUR',
      lines: [
        { type: 'product', sku: 'CAP-RED', description: 'Cap', quantity: 1, unit_price_cents: 900 },
        { type: 'wallet_load', wallet_id: id, amount_cents: 500 },
        { type: 'membership', plan_id: id, customer_id: id, holder_customer_id: id },
      ],
    });
  });
});
