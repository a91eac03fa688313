/**
 * The digests src/core/sdk-signing.ts remembers between the client's signer
 * and mock-hcs's verifier (HCS-5): a remembered digest is only ever the
 * digest of an equal input, callers get their own Buffers, and a request
 * changed after signing — body, key, header — still fails verification
 * straight after the signer hashed the original.
 */
import * as crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signRequest, type HttpRequest } from '../../src/product/cloud/index.js';
import { hmacSha256, hmacSha256Hex, sha256Hex } from '../../src/core/sdk-signing.js';
import { verifySignature } from '../../mock-hcs/src/auth.js';

const sha = (s: string): string => crypto.createHash('sha256').update(s).digest('hex');
const hmac = (k: string, m: string): string => crypto.createHmac('sha256', k).update(m).digest('hex');

describe('remembered digests', () => {
  it('sha256Hex and the HMACs equal node:crypto over inputs that repeat, alternate and outgrow what is remembered', () => {
    const inputs = ['a', 'b', 'a', 'c', 'd', 'e', 'f', 'a', 'b', 'b', 'x'.repeat(40_000), 'x'.repeat(39_999) + 'y', 'x'.repeat(40_000), 'ü€😀'];
    for (const s of inputs) expect(sha256Hex(s), s.slice(0, 10)).toBe(sha(s));
    for (const k of ['k1', 'k2', 'k1']) for (const m of inputs) {
      expect(hmacSha256Hex(k, m)).toBe(hmac(k, m));
      expect(hmacSha256(k, m).toString('hex')).toBe(hmac(k, m));
    }
  });

  it('hands out a fresh Buffer: changing one does not change the next answer', () => {
    const first = hmacSha256('key', 'message');
    first.fill(0);
    expect(hmacSha256('key', 'message').toString('hex')).toBe(hmac('key', 'message'));
  });

  it('HCS-5: a request changed after it was signed fails verification right after signing', () => {
    const creds = { ak: 'AK1', sk: 'secret-1' };
    const now = new Date(Date.UTC(2025, 0, 1, 12, 0, 0));
    const req: HttpRequest = { method: 'POST', path: '/v1/p1/cloudservers', headers: { 'content-type': 'application/json' }, body: '{"server":{"name":"a"}}' };
    const signed = signRequest(req, creds, 'ecs.example', now);
    const input = (r: HttpRequest): { method: string; url: string; headers: Record<string, string>; body: string } => ({ method: r.method, url: r.path, headers: r.headers, body: r.body ?? '' });
    const sk = (ak: string): string | undefined => (ak === 'AK1' ? creds.sk : undefined);
    expect(verifySignature(input(signed), sk, now.getTime(), 60_000)).toEqual({ ok: true, ak: 'AK1' });
    // Signed again (the digests of this request are the ones remembered), then altered.
    const again = signRequest(req, creds, 'ecs.example', now);
    expect(verifySignature(input({ ...again, body: '{"server":{"name":"b"}}' }), sk, now.getTime(), 60_000)).toMatchObject({ ok: false, reason: 'verify aksk signature fail' });
    expect(verifySignature(input({ ...again, path: '/v1/p1/cloudservers?x=1' }), sk, now.getTime(), 60_000)).toMatchObject({ ok: false });
    expect(verifySignature(input({ ...again, headers: { ...again.headers, 'content-type': 'text/plain' } }), sk, now.getTime(), 60_000)).toMatchObject({ ok: false });
    expect(verifySignature(input(again), () => 'another-secret', now.getTime(), 60_000)).toMatchObject({ ok: false, reason: 'verify aksk signature fail' });
    expect(verifySignature(input(again), sk, now.getTime(), 60_000)).toEqual({ ok: true, ak: 'AK1' });
  });
});
