/**
 * signRequest's shortcuts (HMAC key blocks per SK, remembered X-Sdk-Date,
 * percent-encoding through encodeURIComponent, paths and queries that need no
 * encoding or decoding) against the plain algorithm: the same Authorization
 * header, byte for byte, over generated requests; and against the official
 * SDK signer where it can express the request (query as an object).
 */
import * as crypto from 'node:crypto';
import { AKSKSigner } from '@huaweicloud/huaweicloud-sdk-core/auth/AKSKSigner.js';
import { describe, expect, it } from 'vitest';
import { SeededRng } from '../../src/core/index.js';
import { sdkDate, sdkUrlEncode, signRequest, type HttpRequest } from '../../src/product/cloud/index.js';
import { verifySignature } from '../../mock-hcs/src/auth.js';
import { PLAIN, refEncode, refQuery, refUri, text } from '../support/sdk-signing-reference.js';

// ---------------------------------------------------------------- the plain algorithm (the signer as it was written first)

function refSign(req: HttpRequest, creds: { ak: string; sk: string }, host: string, now: Date): string {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    const lk = k.toLowerCase();
    if (lk === 'authorization' || lk === 'x-sdk-date' || lk === 'host') continue;
    headers[lk] = v;
  }
  const date = now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z');
  headers['x-sdk-date'] = date;
  headers['host'] = host;
  const names = Object.keys(headers).sort();
  const q = req.path.indexOf('?');
  const path = q >= 0 ? req.path.slice(0, q) : req.path;
  const uri = refUri(path);
  const sha = (s: string) => crypto.createHash('sha256').update(s).digest('hex');
  const canonical = [
    req.method.toUpperCase(),
    uri.endsWith('/') ? uri : `${uri}/`,
    refQuery(q >= 0 ? req.path.slice(q + 1) : ''),
    names.map((n) => `${n}:${headers[n]}\n`).join(''),
    names.join(';'),
    headers['x-sdk-content-sha256'] ?? sha(req.body ?? ''),
  ].join('\n');
  const signature = crypto.createHmac('sha256', creds.sk).update(['SDK-HMAC-SHA256', date, sha(canonical)].join('\n')).digest('hex');
  return `SDK-HMAC-SHA256 Access=${creds.ak}, SignedHeaders=${names.join(';')}, Signature=${signature}`;
}

// ---------------------------------------------------------------- generated input

function plain(rng: SeededRng, max: number): string {
  return text(rng, max, PLAIN);
}

function request(rng: SeededRng): HttpRequest {
  const segs = Array.from({ length: 1 + rng.int(5) }, () => (rng.next() < 0.6 ? plain(rng, 12) : text(rng, 8)));
  let path = `/${segs.join('/')}${rng.next() < 0.2 ? '/' : ''}`;
  const kind = rng.int(4);
  if (kind === 1) {
    // A query as HcsClient builds it: encodeURIComponent pairs, sometimes repeated keys.
    const pairs = Array.from({ length: 1 + rng.int(4) }, () => `${encodeURIComponent(rng.next() < 0.7 ? plain(rng, 6) || 'k' : text(rng, 4).replace(/\ud800/g, ''))}=${encodeURIComponent(text(rng, 10).replace(/\ud800/g, ''))}`);
    if (rng.next() < 0.3) pairs.push(pairs[0]!.split('=')[0] + '=again');
    path += `?${pairs.join('&')}`;
  } else if (kind === 2) {
    // A raw query with anything in it (what a hand-made request could send).
    path += `?${text(rng, 20)}`;
  } else if (kind === 3) {
    // Plain ASCII pairs without % or + (the no-decoding path).
    path += `?${Array.from({ length: 1 + rng.int(4) }, () => `${plain(rng, 5)}${rng.next() < 0.8 ? `=${plain(rng, 8)}` : ''}`).join(rng.next() < 0.2 ? '&&' : '&')}`;
  }
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (rng.next() < 0.5) headers['X-Project-Id'] = plain(rng, 32);
  if (rng.next() < 0.2) headers['X-Sdk-Content-Sha256'] = 'UNSIGNED-PAYLOAD';
  if (rng.next() < 0.2) headers['authorization'] = 'stale';
  const method = ['GET', 'POST', 'put', 'DELETE'][rng.int(4)]!;
  return { method, path, headers, ...(method !== 'GET' && rng.next() < 0.7 ? { body: JSON.stringify({ x: text(rng, 30).replace(/\ud800/g, '') }) } : {}) };
}

describe('signRequest shortcuts give the same signature', () => {
  it('as the plain algorithm, over generated requests, keys and instants', () => {
    const rng = new SeededRng(20260101);
    const keys = ['SK', 'k'.repeat(64), 'K'.repeat(65), `${'s'.repeat(40)}é`, crypto.randomBytes(24).toString('base64')];
    const t0 = Date.UTC(2026, 0, 2, 3, 4, 5);
    for (let i = 0; i < 3000; i++) {
      const req = request(rng);
      const creds = { ak: `AK${i % 3}`, sk: keys[rng.int(keys.length)]! };
      // Instants repeat (the remembered date) and change by less than a second (same date text) or more.
      const now = new Date(t0 + rng.int(4) * 400 + (i % 50 === 0 ? 86_400_000 : 0));
      const ours = signRequest(req, creds, 'mock-hcs.local', now);
      expect(ours.headers['authorization'], `${req.method} ${req.path}`).toBe(refSign(req, creds, 'mock-hcs.local', now));
      expect(ours.headers['x-sdk-date']).toBe(now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z'));
      // mock-hcs accepts it (the verifier has the same shortcuts; it is checked against this plain algorithm too).
      const v = verifySignature({ method: ours.method, url: ours.path, headers: ours.headers, body: ours.body ?? '' }, (ak) => (ak === creds.ak ? creds.sk : undefined), now.getTime(), 60_000);
      expect(v, `${req.method} ${req.path}`).toEqual({ ok: true, ak: creds.ak });
    }
  });

  it('as the official SDK signer (structured queries)', () => {
    const rng = new SeededRng(7);
    for (let i = 0; i < 300; i++) {
      const now = new Date(Date.UTC(2026, 0, 2, 3, 4, 5) + i * 1000);
      const segs = Array.from({ length: 1 + rng.int(4) }, () => plain(rng, 10) || 'x');
      const query: Record<string, string | string[]> = {};
      for (let k = rng.int(4); k > 0; k--) {
        const key = rng.next() < 0.8 ? plain(rng, 6) || 'k' : text(rng, 4).replace(/[\ud800%]/g, '');
        const value = () => text(rng, 8).replace(/\ud800/g, '');
        query[key] = rng.next() < 0.3 ? [value(), value()] : value();
      }
      const qs = Object.entries(query)
        .flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => `${encodeURIComponent(k)}=${encodeURIComponent(x)}`))
        .join('&');
      const path = `/${segs.join('/')}`;
      const body = rng.next() < 0.5 ? { n: text(rng, 10).replace(/\ud800/g, '') } : undefined;
      const ours = signRequest(
        { method: 'POST', path: qs ? `${path}?${qs}` : path, headers: { 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) },
        { ak: 'AK', sk: 'SK-secret' },
        'example.com:8443',
        now,
      );
      const sdk = AKSKSigner.sign(
        {
          endpoint: `http://example.com:8443${path}`,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'X-Sdk-Date': sdkDate(now) },
          queryParams: structuredClone(query),
          ...(body ? { data: body } : {}),
        } as never, // the SDK's IHttpRequest has many optional members this test does not need
        { getAk: () => 'AK', getSk: () => 'SK-secret' } as never,
      ) as Record<string, string>;
      expect(ours.headers['authorization'], `${path}?${qs}`).toBe(sdk['Authorization']);
    }
  });

  it('sdkUrlEncode equals the per-character encoding, lone surrogates and sub-delimiters included', () => {
    const rng = new SeededRng(3);
    for (let i = 0; i < 5000; i++) {
      const s = text(rng, 12);
      expect(sdkUrlEncode(s), JSON.stringify(s)).toBe(refEncode(s));
    }
    expect(sdkUrlEncode("a!b'c(d)e*f g")).toBe('a%21b%27c%28d%29e%2Af%20g');
    expect(sdkUrlEncode('x\ud800y')).toBe('x%EF%BF%BDy');
  });
});
