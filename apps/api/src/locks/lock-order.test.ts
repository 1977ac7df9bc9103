import type { Tx } from '@booking/db';
import { LOCK_ORDER, LockOrderError, claimLock } from './lock-order';

// Transactions are only keys here: any object stands for one.
const transaction = () => ({}) as Tx;

describe('lock order', () => {
  it('when a transaction takes its locks in the house order, with repeats of one kind, then every claim passes', () => {
    const tx = transaction();
    expect(() => {
      claimLock(tx, 'shift');
      claimLock(tx, 'booking');
      claimLock(tx, 'slot');
      claimLock(tx, 'slot');
      claimLock(tx, 'payment');
      claimLock(tx, 'gift_card');
      claimLock(tx, 'customer');
    }).not.toThrow();
  });

  it('when a lock comes after one that the order puts later, then the claim is refused naming both', () => {
    const tx = transaction();
    claimLock(tx, 'booking');
    claimLock(tx, 'slot');
    expect(() => claimLock(tx, 'booking')).toThrow(LockOrderError);
    expect(() => claimLock(tx, 'refund')).toThrow('lock order violated: refund taken after slot');
  });

  it('when a transaction locks again a row it holds, then the claim passes whatever it locked since', () => {
    const tx = transaction();
    claimLock(tx, 'booking', 'b1');
    claimLock(tx, 'refund', 'r1');
    expect(() => claimLock(tx, 'booking', 'b1')).not.toThrow();
    expect(() => claimLock(tx, 'booking', 'b2')).toThrow('lock order violated: booking taken after refund');
  });

  it('when two transactions interleave, then each is checked against its own locks only', () => {
    const first = transaction();
    const second = transaction();
    claimLock(first, 'customer');
    expect(() => claimLock(second, 'booking')).not.toThrow();
    expect(() => claimLock(first, 'booking')).toThrow(LockOrderError);
  });

  it('when the order is read, then booking comes before slot and money, and customer is last', () => {
    expect(LOCK_ORDER.indexOf('booking')).toBeLessThan(LOCK_ORDER.indexOf('slot'));
    expect(LOCK_ORDER.indexOf('slot')).toBeLessThan(LOCK_ORDER.indexOf('payment'));
    expect(LOCK_ORDER.indexOf('payment')).toBeLessThan(LOCK_ORDER.indexOf('gift_card'));
    expect(LOCK_ORDER.at(-1)).toBe('customer');
  });
});
