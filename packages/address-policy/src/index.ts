export {
  AddressPolicyError,
  classifyAddress,
  resolveVettedAddresses,
  systemLookupAll,
  vetAddresses,
} from './address-policy';
export type { AddressVerdict, LookupAll, VettedAddress } from './address-policy';
