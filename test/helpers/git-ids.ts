import { createHash } from 'node:crypto';

/** The id git gives a blob of this content, computed here rather than by the code under test. */
export function blobId(content: Buffer | string): string {
  const body = Buffer.from(content);
  return createHash('sha1').update(`blob ${body.length}\0`).update(body).digest('hex');
}
