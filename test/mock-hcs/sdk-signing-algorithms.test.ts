/**
 * The signing algorithms the official SDKs offer besides SDK-HMAC-SHA256
 * (HCS-5): SDK-HMAC-SM3 and SDK-ECDSA-P256-SHA256 verify, SDK-SM2-SM3 and
 * unknown algorithms are refused by name, and SignedHeaders need not contain
 * host (the Go SDK never signs it). The fixed signatures are the published
 * test vectors of huaweicloud-sdk-go-v3 v0.1.207 core/auth/signer
 * (signer_test.go, sm3_signer_test.go: AK "AccessKey", SK "SecretKey",
 * X-Sdk-Date 20060102T150405Z, GET /path?limit=1 and POST /path?key=value
 * with body {"Name":"test","Id":1} and a newline, as Go's json.Encoder writes it). The Go and Python suites
 * (test/sdk-go, test/sdk-python) drive the same algorithms through the SDKs.
 */
import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../mock-hcs/src/auth.js';
import { canonicalRequestDigest, p256KeyPair, p256PrivateScalar, p256SignHex, stringToSign } from '../../src/core/sdk-signing.js';
import { setup } from './helpers.js';

const lookup = (ak: string) => (ak === 'AccessKey' ? 'SecretKey' : undefined);
const DATE = '20060102T150405Z';
const NOW = Date.UTC(2006, 0, 2, 15, 4, 5);
const GET = { method: 'GET', url: '/path?limit=1', body: '' };
const POST = { method: 'POST', url: '/path?key=value', body: '{"Name":"test","Id":1}\n' }; // json.Encoder's trailing newline

function auth(alg: string, signedHeaders: string, signature: string): string {
  return `${alg} Access=AccessKey, SignedHeaders=${signedHeaders}, Signature=${signature}`;
}

describe('signing algorithms (HCS-5)', () => {
  it('SDK-HMAC-SHA256 and SDK-HMAC-SM3 verify the Go SDK test vectors, signed without host', () => {
    const vectors: [string, typeof GET, string][] = [
      ['SDK-HMAC-SHA256', GET, '5a2ce64c865e0e6046321c6f3d5a77ba8413eeaf355c3166c03d58d02ac79624'],
      ['SDK-HMAC-SHA256', POST, 'cecc2af119b18ab70b4d094c0750f3b42c02f254903179a0fc2cc72fc9db4f59'],
      ['SDK-HMAC-SM3', GET, 'acdeecf8061419275127135b54532c2c20b683bf9bbb8a32bee021a8c40befd4'],
      ['SDK-HMAC-SM3', POST, '359e49285fe5a469f82b86fd761b1a4a7ee16e3181de7d643c53a30667cde508'],
    ];
    for (const [alg, req, sig] of vectors) {
      const headers = { 'x-sdk-date': DATE, authorization: auth(alg, 'x-sdk-date', sig), 'content-type': 'application/json' };
      expect(verifySignature({ ...req, headers }, lookup, NOW, 60_000), `${alg} ${req.method}`).toEqual({ ok: true, ak: 'AccessKey' });
      // One bit of the body or query changed: refused, naming the algorithm when it is not the default.
      const changed = { ...req, url: `${req.url}0`, headers };
      const r = verifySignature(changed, lookup, NOW, 60_000);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toBe(alg === 'SDK-HMAC-SHA256' ? 'verify aksk signature fail' : `verify aksk signature fail (${alg})`);
    }
  });

  it('SDK-ECDSA-P256-SHA256: the key derived from AK/SK verifies a DER signature of the string to sign and nothing else', () => {
    const d = p256PrivateScalar('AccessKey', 'SecretKey');
    expect(d > 0n && d < 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n).toBe(true);
    // The public key is the derived scalar times the base point (same key object as the private one's public part).
    const { priv, pub } = p256KeyPair('AccessKey', 'SecretKey');
    expect(pub.export({ format: 'jwk' })).toEqual({ ...priv.export({ format: 'jwk' }), d: undefined, kty: 'EC', crv: 'P-256' } as object);
    const sts = stringToSign(DATE, canonicalRequestDigest('sha256', 'GET', GET.url, `x-sdk-date:${DATE}\n`, 'x-sdk-date', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'), 'SDK-ECDSA-P256-SHA256');
    const sig = p256SignHex('AccessKey', 'SecretKey', sts);
    const headers = { 'x-sdk-date': DATE, authorization: auth('SDK-ECDSA-P256-SHA256', 'x-sdk-date', sig) };
    expect(verifySignature({ ...GET, headers }, lookup, NOW, 60_000)).toEqual({ ok: true, ak: 'AccessKey' });
    expect(verifySignature({ ...GET, url: '/path?limit=2', headers }, lookup, NOW, 60_000)).toEqual({ ok: false, reason: 'verify aksk signature fail (SDK-ECDSA-P256-SHA256)' });
    // Signed with another SK's key: refused.
    const foreign = p256SignHex('AccessKey', 'OtherSecret', sts);
    expect(verifySignature({ ...GET, headers: { ...headers, authorization: auth('SDK-ECDSA-P256-SHA256', 'x-sdk-date', foreign) } }, lookup, NOW, 60_000).ok).toBe(false);
  });

  it('x-sdk-date must be signed; host need not be', () => {
    const headers = { 'x-sdk-date': DATE, host: 'example.huaweicloud.com', authorization: auth('SDK-HMAC-SHA256', 'host', '00') };
    expect(verifySignature({ ...GET, headers }, lookup, NOW, 60_000)).toEqual({ ok: false, reason: 'SignedHeaders must include x-sdk-date' });
  });

  it('SDK-SM2-SM3, V11-HMAC-SHA256 and unknown algorithms: 401 APIGW.0301 naming the algorithm, in the cloud error shape', async () => {
    const env = await setup();
    const cases = [
      [auth('SDK-SM2-SM3', 'x-sdk-date', 'ab'), 'SDK-SM2-SM3'],
      ['V11-HMAC-SHA256 Credential=AK/20260101/region/ecs, SignedHeaders=x-sdk-date, Signature=ab', 'V11-HMAC-SHA256'],
      [auth('SDK-HMAC-MD5', 'x-sdk-date', 'ab'), 'SDK-HMAC-MD5'],
    ] as const;
    for (const [header, alg] of cases) {
      const p = env.config.projects[0]!;
      const res = await env.hcs.app.inject({ method: 'GET', url: `/v1/${p.id}/cloudservers/detail`, headers: { authorization: header, 'x-sdk-date': DATE } });
      expect(res.statusCode).toBe(401);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
      expect(res.json()).toEqual({
        error: {
          code: 'APIGW.0301',
          message: `Incorrect IAM authentication information: unsupported signing algorithm ${alg} (mock-hcs verifies SDK-HMAC-SHA256, SDK-HMAC-SM3, SDK-ECDSA-P256-SHA256)`,
        },
      });
    }
    await env.hcs.close();
  });
});
