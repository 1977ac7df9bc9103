import type { IRouter } from 'express';
import type { AppDeps } from '../app-deps';
import type { OperatorBooking } from '../bookings/booking-schemas';
import { getBooking } from '../bookings/get-booking';
import { bookingIdParam } from '../http/path-params';
import { idParam } from '../http/path-params';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { anonymiseCustomer } from './anonymise-customer';
import { CustomersQuery, UpdateCustomerRequest } from './customer-schemas';
import { getCustomer } from './get-customer';
import { listCustomers } from './list-customers';
import { updateCustomer } from './update-customer';

const parseCustomersQuery = createParser(CustomersQuery, 'invalid_query');
const parseUpdate = createParser(UpdateCustomerRequest);

/**
 * Customers with tenant API keys: the v1 full-record read API (customers, and bookings through
 * the operator view) for staff and up; corrections and erasure for managers and up.
 */
export function customerRoutes(router: IRouter, deps: AppDeps): void {
  const staff = requireRole(deps.db, 'staff');
  const manager = requireRole(deps.db, 'manager');

  router.get('/api/v1/customers', staff, async (req, res) => {
    const query = parseCustomersQuery(req.query);
    res.json(
      await listCustomers(deps.db, operatorOf(req).tenantId, {
        limit: Number(query.limit ?? 20),
        startingAfter: query.starting_after,
        email: query.email,
      }),
    );
  });
  router.get('/api/v1/customers/:id', staff, async (req, res) => {
    res.json(await getCustomer(deps.db, operatorOf(req).tenantId, idParam(req, 'customer_not_found')));
  });
  router.get('/api/v1/bookings/:id', staff, async (req, res) => {
    res.json((await getBooking(deps, operatorOf(req).tenantId, bookingIdParam(req))) satisfies OperatorBooking);
  });
  router.patch('/api/customers/:id', manager, async (req, res) => {
    const id = idParam(req, 'customer_not_found');
    res.json(await updateCustomer(deps.db, operatorOf(req), id, parseUpdate(req.body)));
  });
  router.post('/api/customers/:id/anonymise', manager, async (req, res) => {
    res.json(await anonymiseCustomer(deps.db, operatorOf(req), idParam(req, 'customer_not_found')));
  });
}
