/**
 * The verifier's shortcuts (src/core/sdk-signing.ts, shared with the client's
 * signer: HMAC key blocks per SK, percent-encoding through
 * encodeURIComponent, paths and queries that need no encoding or decoding;
 * mock-hcs's remembered X-Sdk-Date) against the plain algorithm over
 * generated input: same canonical forms, same HMAC, and a request signed the
 * plain way verifies while any change to it does not.
 */
import * as crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SeededRng } from '../../src/core/index.js';
import { parseSdkDate, verifySignature } from '../../mock-hcs/src/auth.js';
import { canonicalQuery, canonicalUri, hmacSha256Hex as hmacHex, sdkUrlEncode } from '../../src/core/sdk-signing.js';
import { ALPHABET, PLAIN, refEncode, refQuery, refUri, text } from '../support/sdk-signing-reference.js';

describe('mock-hcs verifier shortcuts', () => {
  it('canonical URI, query and percent-encoding equal the plain algorithm', () => {
    const rng = new SeededRng(11);
    for (let i = 0; i < 5000; i++) {
      const path = `/${Array.from({ length: 1 + rng.int(4) }, () => text(rng, 8, rng.next() < 0.5 ? PLAIN : ALPHABET)).join('/')}`;
      expect(canonicalUri(path), JSON.stringify(path)).toBe(refUri(path));
      const plainQuery = Array.from({ length: rng.int(4) }, () => `${text(rng, 4, PLAIN)}${rng.next() < 0.8 ? `=${text(rng, 6, [...PLAIN, '=', '?', '!', ':'])}` : ''}`).join(rng.next() < 0.2 ? '&&' : '&');
      for (const q of [plainQuery, text(rng, 20), `?${plainQuery}`]) expect(canonicalQuery(q), JSON.stringify(q)).toBe(refQuery(q));
      const s = text(rng, 10);
      expect(sdkUrlEncode(s), JSON.stringify(s)).toBe(refEncode(s));
    }
  });

  it('HMAC-SHA256 from the key blocks equals crypto.createHmac (short, block-sized, long and non-ASCII keys; long messages)', () => {
    const rng = new SeededRng(5);
    for (const key of ['', 'SK', 'k'.repeat(63), 'k'.repeat(64), 'K'.repeat(65), 'ключ'.repeat(30), crypto.randomBytes(40).toString('hex')]) {
      for (let i = 0; i < 50; i++) {
        const msg = i === 49 ? 'm'.repeat(5000) : text(rng, 200);
        expect(hmacHex(key, msg)).toBe(crypto.createHmac('sha256', key).update(msg).digest('hex'));
      }
    }
  });

  it('the remembered X-Sdk-Date gives what parsing gives', () => {
    expect(parseSdkDate('20260102T030405Z')).toBe(Date.UTC(2026, 0, 2, 3, 4, 5));
    expect(parseSdkDate('20260102T030405Z')).toBe(Date.UTC(2026, 0, 2, 3, 4, 5));
    expect(parseSdkDate('20260102T030406Z')).toBe(Date.UTC(2026, 0, 2, 3, 4, 6));
    expect(parseSdkDate('2026-01-02T03:04:05Z')).toBeUndefined();
    expect(parseSdkDate('2026-01-02T03:04:05Z')).toBeUndefined();
    expect(parseSdkDate('')).toBeUndefined();
    expect(parseSdkDate(undefined)).toBeUndefined();
    expect(parseSdkDate('20260102T030405Z')).toBe(Date.UTC(2026, 0, 2, 3, 4, 5));
  });

  it('verifies requests signed the plain way and refuses any change to them', () => {
    const rng = new SeededRng(99);
    const sk = 'project-secret-key';
    const lookup = (ak: string) => (ak === 'AK' ? sk : undefined);
    for (let i = 0; i < 500; i++) {
      const now = Date.UTC(2026, 0, 2, 3, 4, 5) + rng.int(3) * 700;
      const date = new Date(now).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z');
      // No "?" in the path: the verifier, like any server, splits the URL at the first one.
      const path = `/${Array.from({ length: 1 + rng.int(4) }, () => text(rng, 8, rng.next() < 0.6 ? PLAIN : ALPHABET.filter((c) => c !== '?'))).join('/')}`;
      const query = rng.next() < 0.5 ? '' : rng.next() < 0.5 ? text(rng, 16) : `limit=${rng.int(1000)}&name=${text(rng, 6, PLAIN)}`;
      const url = query ? `${path}?${query}` : path;
      const body = rng.next() < 0.5 ? '' : JSON.stringify({ v: text(rng, 12) });
      const headers: Record<string, string> = { 'content-type': 'application/json', host: 'mock-hcs.local', 'x-sdk-date': date, 'x-project-id': text(rng, 8, PLAIN) };
      const names = Object.keys(headers).sort();
      const sha = (s: string) => crypto.createHash('sha256').update(s).digest('hex');
      const canonical = ['GET', refUri(path), refQuery(query), names.map((n) => `${n}:${headers[n]}\n`).join(''), names.join(';'), sha(body)].join('\n');
      const signature = crypto.createHmac('sha256', sk).update(['SDK-HMAC-SHA256', date, sha(canonical)].join('\n')).digest('hex');
      const authorization = `SDK-HMAC-SHA256 Access=AK, SignedHeaders=${names.join(';')}, Signature=${signature}`;
      const req = { method: 'GET', url, headers: { ...headers, authorization }, body };
      expect(verifySignature(req, lookup, now, 60_000), url).toEqual({ ok: true, ak: 'AK' });
      const changes = [
        { ...req, url: `${url}${query ? '&' : '?'}x=1` },
        { ...req, body: `${body} ` },
        { ...req, method: 'DELETE' },
        { ...req, headers: { ...req.headers, 'x-project-id': `${headers['x-project-id']}z` } },
        { ...req, headers: { ...req.headers, authorization: authorization.replace(/.$/, (c) => (c === '0' ? '1' : '0')) } },
      ];
      for (const c of changes) expect(verifySignature(c, lookup, now, 60_000), `${c.method} ${c.url}`).toEqual({ ok: false, reason: 'verify aksk signature fail' });
    }
  });
});
