/**
 * The waiver every participant agrees to. Changing the text means a new version: signatures
 * record the version they agreed to, and a client still showing an older text is refused
 * (409 waiver_version_outdated) rather than collecting consent to words it never showed.
 */
export const WAIVER_VERSION = 'v1';

export const WAIVER_TEXT = [
  'Participation waiver and release of liability.',
  'I understand that this activity involves physical exertion and risks, including injury. I confirm that the',
  'participant named is fit to take part, will follow the instructions of the staff and the safety rules of',
  'the venue, and takes part voluntarily. I accept these risks on behalf of the participant and release the',
  'operator and its staff from liability for injury or loss, except where caused by their negligence or where',
  'the law does not allow such a release. If I sign for someone else, I confirm that I am entitled to do so.',
].join(' ');
