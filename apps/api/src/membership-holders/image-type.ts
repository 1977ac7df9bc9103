import { AppError } from '@booking/domain';

/** The holder photo types taken, and the most a photo may weigh. */
export const PHOTO_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const;
export type PhotoType = (typeof PHOTO_TYPES)[number];
export const MAX_PHOTO_BYTES = 2 * 1024 * 1024;

const startsWith = (image: Buffer, bytes: number[], at = 0) =>
  image.length >= at + bytes.length && bytes.every((byte, i) => image[at + i] === byte);

const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/** Whether the image's first bytes are those of its declared type (its magic number). */
function looksLike(type: PhotoType, image: Buffer): boolean {
  switch (type) {
    case 'image/jpeg':
      return startsWith(image, [0xff, 0xd8, 0xff]);
    case 'image/png':
      return startsWith(image, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    case 'image/webp':
      return startsWith(image, ascii('RIFF')) && startsWith(image, ascii('WEBP'), 8);
  }
}

/** The request's Content-Type as a photo type; 415 unsupported_media_type for any other. */
export function photoTypeOf(contentType: string | undefined): PhotoType {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const type = PHOTO_TYPES.find((candidate) => candidate === media);
  if (!type) {
    throw new AppError('unsupported_media_type', `the photo must be sent as ${PHOTO_TYPES.join(', ')}`);
  }
  return type;
}

/** The body as an image of `type`; 400 invalid_body when it is empty or its bytes are not of that type. */
export function photoBody(type: PhotoType, body: unknown): Buffer {
  if (!Buffer.isBuffer(body) || body.length === 0) throw new AppError('invalid_body', 'the photo is empty');
  if (!looksLike(type, body)) throw new AppError('invalid_body', `the body is not a ${type} image`);
  return body;
}
