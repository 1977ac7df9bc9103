import type { BillingState } from './fake-stripe-billing';
import { itemLine, list, newCustomer, newInvoiceItem, newPrice, newProduct, now } from './fake-stripe-billing-objects';
import {
  bool,
  int,
  invalid,
  lookup,
  metadata,
  missing,
  ok,
  required,
  text,
  unknownParam,
  type Form,
  type Handler,
  type Reply,
} from './fake-stripe-billing-params';
import type { BillingAnswers } from './fake-stripe-billing-render';
import type { FakeInvoice, FakeRecurring } from './fake-stripe-billing-types';

// The billing endpoints around subscriptions: customers, products, prices, and invoices made by
// hand from pending invoice items.

export function catalogRoutes(
  state: BillingState,
  { answerInvoice }: Pick<BillingAnswers, 'answerInvoice'>,
): Record<string, Handler> {
  function createPrice(body: Form): Reply {
    const refused = unknownParam(body, [
      'product',
      'unit_amount',
      'currency',
      'recurring',
      'metadata',
      'nickname',
      'lookup_key',
    ]);
    if (refused) return refused;
    if (!state.products.has(String(body.product))) {
      return body.product ? missing('product', body.product, 'product') : required('product');
    }
    if (body.unit_amount === undefined) return required('unit_amount');
    const unitAmount = int(body.unit_amount);
    if (!Number.isSafeInteger(unitAmount) || unitAmount < 0) {
      return invalid('Invalid integer: unit_amount', { code: 'parameter_invalid_integer', param: 'unit_amount' });
    }
    const currency = text(body.currency)?.toLowerCase();
    if (!currency) return required('currency');
    if (!/^[a-z]{3}$/.test(currency)) return invalid(`Invalid currency: ${currency}`, { param: 'currency' });
    let recurring: FakeRecurring | null = null;
    if (body.recurring !== undefined) {
      const { interval, interval_count: count = '1' } = body.recurring as Form;
      if (interval !== 'day' && interval !== 'week' && interval !== 'month' && interval !== 'year') {
        return invalid('Invalid recurring[interval]: must be one of day, week, month, or year', {
          param: 'recurring[interval]',
        });
      }
      const intervalCount = int(count);
      if (!Number.isSafeInteger(intervalCount) || intervalCount < 1) {
        return invalid('Invalid integer: recurring[interval_count]', { param: 'recurring[interval_count]' });
      }
      recurring = {
        interval,
        interval_count: intervalCount,
        meter: null,
        trial_period_days: null,
        usage_type: 'licensed',
      };
    }
    const price = newPrice({
      product: String(body.product),
      unit_amount: unitAmount,
      currency,
      recurring,
      metadata: metadata(body.metadata),
      nickname: text(body.nickname) ?? null,
      lookup_key: text(body.lookup_key) ?? null,
    });
    state.prices.set(price.id, price);
    return ok(structuredClone(price));
  }

  function createInvoice(body: Form): Reply {
    const refused = unknownParam(body, [
      'customer',
      'auto_advance',
      'collection_method',
      'days_until_due',
      'currency',
      'description',
      'metadata',
      'pending_invoice_items_behavior',
      'expand',
    ]);
    if (refused) return refused;
    const customer = state.customers.get(String(body.customer));
    if (!customer) return body.customer ? missing('customer', body.customer, 'customer') : required('customer');
    const method = body.collection_method ?? 'charge_automatically';
    if (method !== 'charge_automatically' && method !== 'send_invoice') {
      return invalid(`Invalid collection_method: ${String(method)}`, { param: 'collection_method' });
    }
    const daysUntilDue = int(body.days_until_due);
    if (method === 'send_invoice' && !(daysUntilDue >= 0)) return required('days_until_due');
    const behavior = body.pending_invoice_items_behavior ?? 'exclude';
    if (behavior !== 'include' && behavior !== 'exclude') {
      return invalid(`Invalid pending_invoice_items_behavior: ${String(behavior)}`, {
        param: 'pending_invoice_items_behavior',
      });
    }
    const pending = [...state.invoiceItems.values()].filter(
      (item) => item.customer === customer.id && item.invoice === null && behavior === 'include',
    );
    const currency = text(body.currency)?.toLowerCase() ?? pending[0]?.currency ?? customer.currency ?? 'usd';
    return answerInvoice(body, () => {
      const invoice = state.draftInvoice(customer, {
        currency,
        billing_reason: 'manual',
        auto_advance: bool(body.auto_advance) ?? false,
        collection_method: method,
        metadata: metadata(body.metadata),
        due_date: method === 'send_invoice' ? now() + daysUntilDue * 86_400 : null,
        description: text(body.description) ?? null,
        parent: null,
      });
      // As Stripe: an invoice takes only the pending items in its own currency.
      const taken = pending.filter((item) => item.currency === currency);
      for (const item of taken) item.invoice = invoice.id;
      state.setLines(
        invoice,
        taken.map((item) => itemLine(invoice, item)),
      );
      return invoice;
    });
  }

  function payInvoice(invoice: FakeInvoice, body: Form): Reply {
    const refused = unknownParam(body, ['paid_out_of_band', 'expand']);
    if (refused) return refused;
    if (invoice.status === 'paid') return invalid('Invoice is already paid.', { code: 'invoice_already_paid' });
    if (invoice.status !== 'draft' && invoice.status !== 'open') {
      return invalid(`This invoice is ${invoice.status} and can no longer be paid.`);
    }
    let declined: string | undefined;
    const answer = answerInvoice(body, () => {
      // Stripe finalizes a draft before paying it (a draft with nothing to pay is then paid already).
      if (invoice.status === 'draft') state.finalize(invoice);
      if (invoice.status !== 'open') return invoice;
      if (bool(body.paid_out_of_band)) {
        state.markPaid(invoice);
        return invoice;
      }
      const attempt = state.nextApiAttempt();
      state.attempt(invoice, attempt);
      declined = attempt.declineCode;
      return invoice;
    });
    // As Stripe: the failed attempt is recorded on the invoice, and the request fails with the card's error.
    if (declined === undefined) return answer;
    const intent = state.invoiceIntents.get(invoice.id)!;
    return {
      status: 402,
      body: { error: { ...intent.last_payment_error, payment_intent: structuredClone(intent) } },
    };
  }

  const invoiceRoute =
    (handle: (invoice: FakeInvoice, body: Form) => Reply): Handler =>
    (body, id) =>
      lookup(state.invoices, 'invoice', id, (invoice) => handle(invoice, body));

  return {
    'POST customers': (body) => {
      const refused = unknownParam(body, ['email', 'name', 'description', 'metadata']);
      if (refused) return refused;
      const customer = newCustomer({
        email: text(body.email) ?? null,
        name: text(body.name) ?? null,
        description: text(body.description) ?? null,
        metadata: metadata(body.metadata),
      });
      state.customers.set(customer.id, customer);
      return ok(structuredClone(customer));
    },
    'GET customers/:id': (_body, id) =>
      lookup(state.customers, 'customer', id, (customer) => ok(structuredClone(customer))),

    'POST products': (body) => {
      const refused = unknownParam(body, ['name', 'description', 'metadata', 'active']);
      if (refused) return refused;
      if (!text(body.name)) return required('name');
      const product = newProduct({
        name: String(body.name),
        description: text(body.description) ?? null,
        metadata: metadata(body.metadata),
        active: bool(body.active) ?? true,
      });
      state.products.set(product.id, product);
      return ok(structuredClone(product));
    },

    'POST prices': createPrice,
    'GET prices/:id': (_body, id) => lookup(state.prices, 'price', id, (price) => ok(structuredClone(price))),
    // Prices are immutable: an update may touch only these, so unit_amount is an unknown parameter.
    'POST prices/:id': (body, id) =>
      lookup(state.prices, 'price', id, (price) => {
        const refused = unknownParam(body, ['active', 'metadata', 'nickname', 'lookup_key']);
        if (refused) return refused;
        price.active = bool(body.active) ?? price.active;
        price.metadata = metadata(body.metadata, price.metadata);
        price.nickname = text(body.nickname) ?? price.nickname;
        price.lookup_key = text(body.lookup_key) ?? price.lookup_key;
        return ok(structuredClone(price));
      }),

    'POST invoiceitems': (body) => {
      const refused = unknownParam(body, ['customer', 'amount', 'currency', 'description', 'metadata']);
      if (refused) return refused;
      if (!state.customers.has(String(body.customer))) {
        return body.customer ? missing('customer', body.customer, 'customer') : required('customer');
      }
      const amount = int(body.amount);
      if (!Number.isSafeInteger(amount))
        return invalid('Invalid integer: amount', { code: 'parameter_invalid_integer', param: 'amount' });
      const currency = text(body.currency)?.toLowerCase();
      if (!currency) return required('currency');
      const item = newInvoiceItem({
        customer: String(body.customer),
        amount,
        currency,
        description: text(body.description) ?? null,
        metadata: metadata(body.metadata),
      });
      state.invoiceItems.set(item.id, item);
      return ok(structuredClone(item));
    },
    'POST invoices': createInvoice,
    // Newest first, as Stripe lists them; one page (has_more is always false here).
    'GET invoices': (body) => {
      const refused = unknownParam(body, ['subscription', 'customer', 'status', 'limit']);
      if (refused) return refused;
      const limit = body.limit === undefined ? 10 : int(body.limit);
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100)
        return invalid('Invalid integer: limit', { code: 'parameter_invalid_integer', param: 'limit' });
      const found = [...state.invoices.values()]
        .filter(
          (invoice) =>
            (body.subscription === undefined ||
              invoice.parent?.subscription_details.subscription === body.subscription) &&
            (body.customer === undefined || invoice.customer === body.customer) &&
            (body.status === undefined || invoice.status === body.status),
        )
        .sort((a, b) => b.created - a.created);
      return ok(list(structuredClone(found.slice(0, limit)), '/v1/invoices'));
    },
    'GET invoices/:id': invoiceRoute((invoice, body) => {
      const refused = unknownParam(body, ['expand']);
      return refused ?? answerInvoice(body, () => invoice);
    }),
    'POST invoices/:id/finalize': invoiceRoute((invoice, body) => {
      const refused = unknownParam(body, ['auto_advance', 'expand']);
      if (refused) return refused;
      if (invoice.status !== 'draft') {
        return invalid("This invoice is already finalized, you can't re-finalize a non-draft invoice.");
      }
      return answerInvoice(body, () => {
        invoice.auto_advance = bool(body.auto_advance) ?? invoice.auto_advance;
        state.finalize(invoice);
        return invoice;
      });
    }),
    'POST invoices/:id/pay': invoiceRoute(payInvoice),
    'POST invoices/:id/void': invoiceRoute((invoice, body) => {
      const refused = unknownParam(body, ['expand']);
      if (refused) return refused;
      if (invoice.status !== 'open' && invoice.status !== 'uncollectible') {
        return invalid(`You can only void an open or uncollectible invoice; this one is ${invoice.status}.`);
      }
      return answerInvoice(body, () => {
        state.voidInvoice(invoice);
        return invoice;
      });
    }),
  };
}
