// Assertions on the parsers, shared by their unit tests.
import { expect } from 'vitest';
import { ParseError, parseDocument, type DocumentFormat } from '../../src/sources/parsers/index.js';

export const utf8 = (text: string) => new TextEncoder().encode(text);

/** The message of the ParseError that parsing `bytes` as `format` fails with (any other outcome fails the test). */
export async function parseFails(bytes: Uint8Array, format: DocumentFormat): Promise<string> {
  const err = await parseDocument(bytes, format).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ParseError);
  return (err as ParseError).message;
}
