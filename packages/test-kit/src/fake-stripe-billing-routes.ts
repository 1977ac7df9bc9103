import type { BillingState } from './fake-stripe-billing';
import { catalogRoutes } from './fake-stripe-billing-catalog-routes';
import { now } from './fake-stripe-billing-objects';
import {
  bool,
  entries,
  invalid,
  isReply,
  lookup,
  metadata,
  missing,
  required,
  unknownParam,
  unsupported,
  type Form,
  type Handler,
  type Reply,
} from './fake-stripe-billing-params';
import { billingAnswers } from './fake-stripe-billing-render';
import type { FakePrice, FakeRecurring, FakeSubscription, FakeSubscriptionItem } from './fake-stripe-billing-types';

// The fake's Stripe Billing endpoints: subscriptions here, the rest in
// fake-stripe-billing-catalog-routes.ts, all changing the state in fake-stripe-billing.ts.

export function billingRouter(state: BillingState) {
  const answers = billingAnswers(state);
  const { answerSubscription } = answers;

  /** The recurring price `param` names, or why it cannot be used. */
  function recurringPrice(id: unknown, param: string): FakePrice | Reply {
    const price = state.prices.get(String(id));
    if (!price) return missing('price', id, param);
    if (!price.recurring) {
      return invalid(
        'The price specified is set to `type=one_time` but this field only accepts prices with `type=recurring`.',
        { param },
      );
    }
    return price;
  }

  function createSubscription(body: Form): Reply {
    const refused = unknownParam(body, [
      'customer',
      'items',
      'payment_behavior',
      'payment_settings',
      'billing_mode',
      'metadata',
      'expand',
    ]);
    if (refused) return refused;
    const customer = state.customers.get(String(body.customer));
    if (!customer) return body.customer ? missing('customer', body.customer, 'customer') : required('customer');
    if (body.payment_behavior !== 'default_incomplete') {
      return unsupported(
        `payment_behavior=${String(body.payment_behavior)}: it has no payment method to charge, so only default_incomplete`,
      );
    }
    const items = entries(body.items) as Form[];
    if (items.length === 0) return required('items');
    const prices: FakePrice[] = [];
    for (const [index, item] of items.entries()) {
      if (Object.keys(item).some((key) => key !== 'price')) return unsupported(`items[${index}] other than [price]`);
      const price = recurringPrice(item.price, `items[${index}][price]`);
      if (isReply(price)) return price;
      prices.push(price);
    }
    const interval = ({ recurring, currency }: FakePrice) =>
      `${currency} ${recurring!.interval_count} ${recurring!.interval}`;
    if (new Set(prices.map(interval)).size > 1) {
      return invalid('Currency and interval fields must match across all plans on this subscription.', {
        param: 'items',
      });
    }
    const settings = (body.payment_settings as Form | undefined) ?? {};
    const save = settings.save_default_payment_method;
    if (
      Object.keys(settings).some((key) => key !== 'save_default_payment_method') ||
      (save && save !== 'off' && save !== 'on_subscription')
    ) {
      return unsupported('payment_settings other than save_default_payment_method=off|on_subscription');
    }
    const mode = (body.billing_mode as Form | undefined)?.type ?? 'classic';
    if (mode !== 'classic' && mode !== 'flexible')
      return invalid(`Invalid billing_mode[type]: ${String(mode)}`, { param: 'billing_mode[type]' });
    return answerSubscription(body, () =>
      state.createSubscription({
        customer: customer.id,
        prices,
        metadata: metadata(body.metadata),
        billingMode: mode,
        saveDefaultPaymentMethod: (save as 'off' | 'on_subscription' | undefined) ?? null,
      }),
    );
  }

  function updateSubscription(subscription: FakeSubscription, body: Form): Reply {
    const refused = unknownParam(body, [
      'items',
      'proration_behavior',
      'payment_behavior',
      'cancel_at_period_end',
      'metadata',
      'expand',
    ]);
    if (refused) return refused;
    const paymentBehavior = body.payment_behavior ?? 'allow_incomplete';
    if (paymentBehavior !== 'allow_incomplete' && paymentBehavior !== 'pending_if_incomplete') {
      return unsupported(`payment_behavior=${String(paymentBehavior)}: only allow_incomplete or pending_if_incomplete`);
    }
    const pendingIfIncomplete = paymentBehavior === 'pending_if_incomplete';
    if (pendingIfIncomplete && (body.metadata !== undefined || body.cancel_at_period_end !== undefined)) {
      return invalid(
        'When payment_behavior is pending_if_incomplete you can only pass the parameters supported by pending updates.',
        { param: body.metadata === undefined ? 'cancel_at_period_end' : 'metadata' },
      );
    }
    const changesMoreThanMetadata = Object.keys(body).some((key) => key !== 'metadata' && key !== 'expand');
    if (changesMoreThanMetadata && ['canceled', 'incomplete_expired'].includes(subscription.status)) {
      return invalid('A canceled subscription can only update its cancellation_details and metadata.');
    }
    if (changesMoreThanMetadata && subscription.status === 'incomplete') {
      return invalid('A subscription in incomplete status can only have metadata and default_source updated.');
    }
    const swaps: { item: FakeSubscriptionItem; price: FakePrice }[] = [];
    for (const [index, entry] of (entries(body.items) as Form[]).entries()) {
      const item = subscription.items.data.find((candidate) => candidate.id === entry.id);
      if (!item)
        return entry.id ? missing('subscription_item', entry.id, `items[${index}][id]`) : unsupported('adding items');
      if (Object.keys(entry).some((key) => key !== 'id' && key !== 'price'))
        return unsupported(`items[${index}] other than [id] and [price]`);
      if (entry.price === undefined || entry.price === item.price.id) continue;
      const price = recurringPrice(entry.price, `items[${index}][price]`);
      if (isReply(price)) return price;
      const { interval, interval_count } = item.price.recurring as FakeRecurring;
      if (
        price.currency !== item.price.currency ||
        price.recurring!.interval !== interval ||
        price.recurring!.interval_count !== interval_count
      ) {
        return unsupported('a price change to another currency or interval (Stripe would reset the billing cycle)');
      }
      swaps.push({ item, price });
    }
    // Stripe's default, create_prorations, leaves proration items for the next invoice; the fake
    // keeps none, so a price change says none (the next renewal bills the new price) or
    // always_invoice (the rest of the period is billed now).
    const prorate = body.proration_behavior === 'always_invoice';
    if (swaps.length > 0 && !prorate && body.proration_behavior !== 'none') {
      return unsupported(
        `proration_behavior=${String(body.proration_behavior)} on a price change: only none or always_invoice`,
      );
    }
    const difference = swaps.reduce((sum, { item, price }) => sum + price.unit_amount - item.price.unit_amount, 0);
    if (prorate && difference < 0) {
      return unsupported('always_invoice on a change that credits the customer: it keeps no customer balance');
    }
    const cancel = bool(body.cancel_at_period_end);
    if (body.cancel_at_period_end !== undefined && cancel === undefined) {
      return invalid('Invalid boolean: cancel_at_period_end', { param: 'cancel_at_period_end' });
    }
    return answerSubscription(body, () => {
      state.changePrices(subscription, swaps, { prorate, pendingIfIncomplete });
      if (cancel !== undefined) state.setCancelAtPeriodEnd(subscription, cancel);
      if (body.metadata !== undefined) subscription.metadata = metadata(body.metadata, subscription.metadata);
      return subscription;
    });
  }

  function cancelSubscription(subscription: FakeSubscription, body: Form): Reply {
    const refused = unknownParam(body, ['expand']);
    if (refused) return refused;
    if (subscription.status === 'canceled' || subscription.status === 'incomplete_expired') {
      return invalid(`This subscription is already ${subscription.status}.`);
    }
    return answerSubscription(body, () => {
      state.endSubscription(subscription, now(), 'cancellation_requested');
      return subscription;
    });
  }

  function pauseSubscription(subscription: FakeSubscription, body: Form): Reply {
    const refused = unknownParam(body, ['type', 'bill_for', 'invoicing_behavior', 'expand']);
    if (refused) return refused;
    if (body.type !== undefined && body.type !== 'subscription')
      return invalid(`Invalid type: ${String(body.type)}`, { param: 'type' });
    // Billing for the unused time or the usage so far would need prorations the fake does not keep.
    const billFor = Object.entries((body.bill_for as Record<string, Form> | undefined) ?? {});
    const billed = billFor.find(([, { type }]) => type !== 'none');
    if (billed) return unsupported(`bill_for[${billed[0]}][type]=${String(billed[1].type)}: only none`);
    if (subscription.billing_mode.type !== 'flexible') {
      return invalid('Pausing a subscription requires billing_mode[type]=flexible.');
    }
    if (subscription.status !== 'active' && subscription.status !== 'past_due') {
      return invalid(`A subscription with status ${subscription.status} cannot be paused.`);
    }
    return answerSubscription(body, () => {
      state.pause(subscription);
      return subscription;
    });
  }

  function resumeSubscription(subscription: FakeSubscription, body: Form): Reply {
    const refused = unknownParam(body, ['billing_cycle_anchor', 'proration_behavior', 'payment_behavior', 'expand']);
    if (refused) return refused;
    // The SDK sends billing_cycle_anchor[type]=now in this API version; older ones sent billing_cycle_anchor=now.
    const anchor = body.billing_cycle_anchor;
    const anchorType = typeof anchor === 'object' ? (anchor as Form).type : anchor;
    if (anchorType !== undefined && anchorType !== 'now')
      return unsupported(`billing_cycle_anchor=${String(anchorType)}: only now`);
    if (body.payment_behavior !== undefined && body.payment_behavior !== 'resume_on_payment_attempt') {
      return unsupported(`payment_behavior=${String(body.payment_behavior)}: only resume_on_payment_attempt`);
    }
    if (subscription.status !== 'paused')
      return invalid(`A subscription with status ${subscription.status} cannot be resumed.`);
    return answerSubscription(body, () => {
      state.resume(subscription);
      return subscription;
    });
  }

  const subscriptionRoute =
    (handle: (subscription: FakeSubscription, body: Form) => Reply): Handler =>
    (body, id) =>
      lookup(state.subscriptions, 'subscription', id, (subscription) => handle(subscription, body));

  const routes: Record<string, Handler> = {
    ...catalogRoutes(state, answers),
    'POST subscriptions': createSubscription,
    'GET subscriptions/:id': subscriptionRoute((subscription, body) => {
      const refused = unknownParam(body, ['expand']);
      return refused ?? answerSubscription(body, () => subscription);
    }),
    'POST subscriptions/:id': subscriptionRoute(updateSubscription),
    'DELETE subscriptions/:id': subscriptionRoute(cancelSubscription),
    'POST subscriptions/:id/pause': subscriptionRoute(pauseSubscription),
    'POST subscriptions/:id/resume': subscriptionRoute(resumeSubscription),
  };

  /** The answer to a billing request, or undefined when the path is not a billing endpoint. */
  return function route(method: string, path: string, body: Form): Reply | undefined {
    const match =
      /^\/v1\/(customers|products|prices|subscriptions|invoiceitems|invoices)(?:\/([^/]+))?(?:\/([a-z]+))?$/.exec(path);
    if (!match) return undefined;
    const [, resource, id, action] = match;
    const key = `${method} ${resource}${id === undefined ? '' : '/:id'}${action === undefined ? '' : `/${action}`}`;
    return routes[key]?.(body, decodeURIComponent(id ?? ''));
  };
}
