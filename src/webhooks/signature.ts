// Webhook secrets and the signature of each delivery: `Folio-Signature: t=<unix seconds>,v1=<hex>`
// where the hex is HMAC-SHA256(secret, "<t>.<raw body>"). Binding the time into the signed text
// lets receivers refuse replays of old deliveries.
import { createHmac, randomBytes } from 'node:crypto';

/** A new endpoint secret: shown once at creation, kept to sign deliveries. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** Hex HMAC-SHA256 of "<timestamp>.<body>" under `secret`. */
export function signature(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/** The Folio-Signature header of `body` sent at `timestamp` (unix seconds). */
export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${signature(secret, timestamp, body)}`;
}
