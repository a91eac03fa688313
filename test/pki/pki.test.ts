import { execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate, createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SeededRng } from '../../src/core/rng.js';
import { caCertHash, certificateSubjectDer, generateCA, ipBytes, issueCertificate, p256Spki, verifyLeaf, type CertKeyPair } from '../../src/core/pki/index.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2025, 0, 2, 3, 4, 5, 678); // milliseconds on purpose: X.509 times are whole seconds

// ---- An independent DER reader for the assertions (not the one under test) ----

interface Node {
  tag: number;
  /** The whole TLV. */
  raw: Buffer;
  /** The contents. */
  body: Buffer;
}

function parse(der: Buffer): Node {
  const tag = der[0]!;
  let len = der[1]!;
  let off = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + der[2 + i]!;
    off = 2 + n;
  }
  return { tag, raw: der.subarray(0, off + len), body: der.subarray(off, off + len) };
}

function children(n: Node): Node[] {
  const out: Node[] = [];
  for (let rest = n.body; rest.length; ) {
    const c = parse(rest);
    out.push(c);
    rest = rest.subarray(c.raw.length);
  }
  return out;
}

const der = (pem: string): Buffer => new X509Certificate(pem).raw;

/** TBSCertificate fields by name (v3 certificates: version present). */
function tbs(pem: string): { version: Node; serial: Node; signature: Node; issuer: Node; validity: Node; subject: Node; spki: Node; extensions: Map<string, { critical: boolean; value: Buffer }> } {
  const [tbsCert, sigAlg] = children(parse(der(pem)));
  const [version, serial, signature, issuer, validity, subject, spki, ext] = children(tbsCert!);
  expect(ext!.tag).toBe(0xa3);
  const extensions = new Map<string, { critical: boolean; value: Buffer }>();
  for (const e of children(children(ext!)[0]!)) {
    const parts = children(e);
    const critical = parts.length === 3 && parts[1]!.tag === 0x01 && parts[1]!.body[0] === 0xff;
    extensions.set(parts[0]!.body.toString('hex'), { critical, value: parts[parts.length - 1]!.body });
  }
  expect(sigAlg!.raw.equals(signature!.raw)).toBe(true);
  return { version: version!, serial: serial!, signature: signature!, issuer: issuer!, validity: validity!, subject: subject!, spki: spki!, extensions };
}

// Extension OIDs (contents octets, hex).
const BASIC_CONSTRAINTS = '551d13';
const KEY_USAGE = '551d0f';
const EXT_KEY_USAGE = '551d25';
const SAN = '551d11';

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const tmp = mkdtempSync(join(tmpdir(), 'hcs-pki-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function fixture(seed = 7): Promise<{ ca: CertKeyPair; leaf: CertKeyPair; plain: CertKeyPair }> {
  const rng = new SeededRng(seed);
  const ca = await generateCA(rng, NOW);
  const leaf = await issueCertificate(ca, { commonName: 'system:node:w-1', organization: 'system:nodes', dnsNames: ['w-1', 'w-1.cluster.local'], ips: ['10.0.0.5', 'fd00::1'] }, rng, NOW);
  const plain = await issueCertificate(ca, { commonName: 'hcs-testbed-admin', organization: 'system:masters' }, rng, NOW);
  return { ca, leaf, plain };
}

describe('issued certificates as Node (OpenSSL) reads them', () => {
  it('CA: self-signed v3 CA, CN=kubernetes, 1 day back to 3650 days ahead, ECDSA P-256 SHA-256', async () => {
    const { ca } = await fixture();
    const c = new X509Certificate(ca.certPem);
    expect(c.subject).toBe('CN=kubernetes');
    expect(c.issuer).toBe('CN=kubernetes');
    expect(c.ca).toBe(true);
    expect(c.checkIssued(c)).toBe(true);
    expect(c.verify(c.publicKey)).toBe(true);
    const sec = Math.floor(NOW / 1000) * 1000;
    expect(Date.parse(c.validFrom)).toBe(sec - DAY);
    expect(Date.parse(c.validTo)).toBe(sec + 3650 * DAY);
    expect(c.publicKey.asymmetricKeyDetails).toEqual({ namedCurve: 'prime256v1' });
    const t = tbs(ca.certPem);
    expect(t.version.raw.toString('hex')).toBe('a003020102'); // v3
    expect(t.signature.raw.toString('hex')).toBe('300a06082a8648ce3d040302'); // ecdsa-with-SHA256, no parameters
    expect(t.issuer.raw.equals(t.subject.raw)).toBe(true);
    expect(t.extensions.get(BASIC_CONSTRAINTS)).toEqual({ critical: true, value: Buffer.from('30030101ff', 'hex') }); // cA TRUE
    // keyUsage digitalSignature(0) | keyEncipherment(2) | keyCertSign(5): 10100100, 2 unused bits
    expect(t.extensions.get(KEY_USAGE)).toEqual({ critical: true, value: Buffer.from('030202a4', 'hex') });
    expect([...t.extensions.keys()]).toEqual([BASIC_CONSTRAINTS, KEY_USAGE]);
  });

  it('leaf: subject, issuer, SANs (DNS and IPv4/IPv6), validity, signed by the CA, key pair matches', async () => {
    const { ca, leaf } = await fixture();
    const c = new X509Certificate(leaf.certPem);
    const caCert = new X509Certificate(ca.certPem);
    expect(c.subject).toBe('CN=system:node:w-1\nO=system:nodes');
    expect(c.issuer).toBe('CN=kubernetes');
    expect(c.subjectAltName).toBe('DNS:w-1, DNS:w-1.cluster.local, IP Address:10.0.0.5, IP Address:FD00:0:0:0:0:0:0:1');
    expect(c.ca).toBe(false);
    expect(c.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']); // Node names extKeyUsage "keyUsage"
    const sec = Math.floor(NOW / 1000) * 1000;
    expect(Date.parse(c.validFrom)).toBe(sec - 60_000);
    expect(Date.parse(c.validTo)).toBe(sec + 365 * DAY);
    expect(c.checkIssued(caCert)).toBe(true);
    expect(c.verify(caCert.publicKey)).toBe(true);
    expect(c.verify(new X509Certificate((await fixture(8)).ca.certPem).publicKey)).toBe(false);
    expect(leaf.keyPem).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n/);
    expect(createPublicKey(leaf.keyPem).equals(c.publicKey)).toBe(true);
    expect(c.checkPrivateKey(createPrivateKey(leaf.keyPem))).toBe(true);
    const t = tbs(leaf.certPem);
    expect(t.extensions.get(BASIC_CONSTRAINTS)).toEqual({ critical: true, value: Buffer.from('3000', 'hex') }); // cA FALSE is the DEFAULT: omitted
    // digitalSignature(0) | keyEncipherment(2): 101, 5 unused bits
    expect(t.extensions.get(KEY_USAGE)).toEqual({ critical: true, value: Buffer.from('030205a0', 'hex') });
    expect(t.extensions.get(EXT_KEY_USAGE)?.critical).toBe(false);
    const san = children(parse(t.extensions.get(SAN)!.value));
    expect(san.map((n) => [n.tag, n.body.toString('hex')])).toEqual([
      [0x82, Buffer.from('w-1').toString('hex')],
      [0x82, Buffer.from('w-1.cluster.local').toString('hex')],
      [0x87, '0a000005'],
      [0x87, 'fd000000000000000000000000000001'],
    ]);
  });

  it('no subjectAltName extension without DNS names or IPs; no O without an organization', async () => {
    const rng = new SeededRng(1);
    const ca = await generateCA(rng, NOW, 'hcs-testbed-ca');
    const c = await issueCertificate(ca, { commonName: 'hcs-testbed-admin' }, rng, NOW);
    const x = new X509Certificate(c.certPem);
    expect(x.subject).toBe('CN=hcs-testbed-admin');
    expect(x.issuer).toBe('CN=hcs-testbed-ca');
    expect(x.subjectAltName).toBeUndefined();
    expect([...tbs(c.certPem).extensions.keys()]).toEqual([BASIC_CONSTRAINTS, KEY_USAGE, EXT_KEY_USAGE]);
    expect(verifyLeaf(c.certPem, c.keyPem, ca.certPem, NOW + 1000)).toMatchObject({ ok: true, subject: 'CN=hcs-testbed-admin', organizations: [] });
  });

  it('names: PrintableString when the value allows it, UTF8String otherwise; the issuer is the CA subject byte for byte', async () => {
    const rng = new SeededRng(3);
    const ca = await generateCA(rng, NOW, 'Grappe_CA é');
    const leaf = await issueCertificate(ca, { commonName: 'system:node:w-1', organization: 'nœuds' }, rng, NOW);
    const caSubject = tbs(ca.certPem).subject;
    const cn = (name: Node, i: number): Node => children(children(children(name)[i]!)[0]!)[1]!;
    expect(cn(caSubject, 0).tag).toBe(0x0c); // '_' and 'é' are not PrintableString
    const t = tbs(leaf.certPem);
    expect(cn(t.subject, 0).tag).toBe(0x13);
    expect(cn(t.subject, 1).tag).toBe(0x0c);
    expect(t.issuer.raw.equals(caSubject.raw)).toBe(true);
    expect(certificateSubjectDer(der(ca.certPem)).equals(caSubject.raw)).toBe(true);
    expect(new X509Certificate(leaf.certPem).subject).toBe('CN=system:node:w-1\nO=nœuds');
    expect(new X509Certificate(leaf.certPem).checkIssued(new X509Certificate(ca.certPem))).toBe(true);
  });

  it('validity: UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280 §4.1.2.5)', async () => {
    const rng = new SeededRng(4);
    const ca = await generateCA(rng, Date.UTC(2045, 0, 1)); // notAfter 2054
    const caTimes = children(tbs(ca.certPem).validity);
    expect(caTimes.map((n) => [n.tag, n.body.toString('latin1')])).toEqual([
      [0x17, '441231000000Z'],
      [0x18, '20541230000000Z'],
    ]);
    const edge = Date.UTC(2050, 0, 1) - 365 * DAY;
    const last = await issueCertificate(ca, { commonName: 'a' }, rng, edge - 1000); // notAfter 2049-12-31T23:59:59Z
    const first = await issueCertificate(ca, { commonName: 'b' }, rng, edge); // notAfter 2050-01-01T00:00:00Z
    expect(children(tbs(last.certPem).validity)[1]!.body.toString('latin1')).toBe('491231235959Z');
    expect(children(tbs(last.certPem).validity)[1]!.tag).toBe(0x17);
    expect(children(tbs(first.certPem).validity)[1]!.body.toString('latin1')).toBe('20500101000000Z');
    expect(children(tbs(first.certPem).validity)[1]!.tag).toBe(0x18);
    expect(Date.parse(new X509Certificate(first.certPem).validTo)).toBe(Date.UTC(2050, 0, 1));
    expect(Date.parse(new X509Certificate(last.certPem).validTo)).toBe(Date.UTC(2050, 0, 1) - 1000);
    expect(new X509Certificate(first.certPem).verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
  });

  it('serials: "1" + 15 hex digits from the rng, deterministic per seed, 15 draws per certificate', async () => {
    const serials = async (seed: number): Promise<string[]> => {
      const { ca, leaf, plain } = await fixture(seed);
      return [ca, leaf, plain].map((c) => new X509Certificate(c.certPem).serialNumber);
    };
    const a = await serials(11);
    expect(await serials(11)).toEqual(a);
    expect(await serials(12)).not.toEqual(a);
    const ref = new SeededRng(11);
    expect(a).toEqual([0, 1, 2].map(() => ('1' + ref.hex(15)).toUpperCase()));
    // The rng is left exactly where three hex(15) draws leave it.
    const rng = new SeededRng(11);
    const ca = await generateCA(rng, NOW);
    await issueCertificate(ca, { commonName: 'x', ips: ['10.0.0.1'] }, rng, NOW);
    const after = new SeededRng(11);
    after.hex(15);
    after.hex(15);
    expect(rng.next()).toBe(after.next());
  });

  it('a CA key in PKCS#8 form signs as well as SEC1', async () => {
    const rng = new SeededRng(5);
    const ca = await generateCA(rng, NOW, 'other');
    const pkcs8 = createPrivateKey(ca.keyPem).export({ format: 'pem', type: 'pkcs8' }).toString();
    const leaf = await issueCertificate({ certPem: ca.certPem, keyPem: pkcs8 }, { commonName: 'n' }, rng, NOW);
    expect(new X509Certificate(leaf.certPem).verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
  });

  it('the hand-built SubjectPublicKeyInfo is the one node:crypto exports', async () => {
    for (let i = 0; i < 20; i++) {
      const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      expect(p256Spki(publicKey).equals(publicKey.export({ format: 'der', type: 'spki' }))).toBe(true);
    }
    const { ca } = await fixture();
    expect(tbs(ca.certPem).spki.raw.equals(p256Spki(createPublicKey(ca.keyPem)))).toBe(true);
    expect(() => p256Spki(generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey)).toThrow(/not a P-256 public key/);
  });

  it('IP addresses: IPv4 as 4 octets, IPv6 (compressed, full, IPv4-embedded) as 16', () => {
    expect(ipBytes('192.168.1.2').toString('hex')).toBe('c0a80102');
    expect(ipBytes('::').toString('hex')).toBe('0'.repeat(32));
    expect(ipBytes('::1').toString('hex')).toBe('0'.repeat(31) + '1');
    expect(ipBytes('1::').toString('hex')).toBe('0001' + '0'.repeat(28));
    expect(ipBytes('2001:db8::8a2e:370:7334').toString('hex')).toBe('20010db80000000000008a2e03707334');
    expect(ipBytes('1:2:3:4:5:6:7:8').toString('hex')).toBe('00010002000300040005000600070008');
    expect(ipBytes('::ffff:10.0.0.1').toString('hex')).toBe('00000000000000000000ffff0a000001');
    expect(() => ipBytes('10.0.0.256')).toThrow(/not an IP address/);
  });
});

describe.skipIf(!hasOpenssl)('issued certificates as the openssl command reads them', () => {
  const openssl = (...args: string[]): string => execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const atTime = String(Math.floor(NOW / 1000) + 3600);

  it('x509 -text parses both; verify chains leaf and SAN-less leaf to the CA', async () => {
    const { ca, leaf, plain } = await fixture();
    writeFileSync(join(tmp, 'ca.pem'), ca.certPem);
    writeFileSync(join(tmp, 'leaf.pem'), leaf.certPem);
    writeFileSync(join(tmp, 'plain.pem'), plain.certPem);
    writeFileSync(join(tmp, 'leaf.key'), leaf.keyPem);
    const caText = openssl('x509', '-in', join(tmp, 'ca.pem'), '-noout', '-text');
    expect(caText).toMatch(/Version: 3 \(0x2\)/);
    expect(caText).toMatch(/Signature Algorithm: ecdsa-with-SHA256/);
    expect(caText).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
    expect(caText).toMatch(/Key Usage: critical\s+Digital Signature, Key Encipherment, Certificate Sign/);
    const leafText = openssl('x509', '-in', join(tmp, 'leaf.pem'), '-noout', '-text');
    expect(leafText).toMatch(/Issuer: CN ?= ?kubernetes/);
    expect(leafText).toMatch(/Subject: CN ?= ?system:node:w-1, O ?= ?system:nodes/);
    expect(leafText).toMatch(/Not Before: Jan {2}2 03:03:05 2025 GMT/);
    expect(leafText).toMatch(/Not After : Jan {2}2 03:04:05 2026 GMT/);
    expect(leafText).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
    expect(leafText).toMatch(/Key Usage: critical\s+Digital Signature, Key Encipherment\n/);
    expect(leafText).toMatch(/Extended Key Usage:\s+TLS Web Server Authentication, TLS Web Client Authentication/);
    expect(leafText).toMatch(/DNS:w-1, DNS:w-1.cluster.local, IP Address:10.0.0.5, IP Address:FD00:0:0:0:0:0:0:1/);
    const verified = openssl('verify', '-attime', atTime, '-CAfile', join(tmp, 'ca.pem'), join(tmp, 'leaf.pem'), join(tmp, 'plain.pem'));
    expect(verified).toContain('leaf.pem: OK');
    expect(verified).toContain('plain.pem: OK');
    expect(openssl('ec', '-in', join(tmp, 'leaf.key'), '-noout', '-check')).toBe('');
    // The key is the leaf's: same public key.
    expect(openssl('pkey', '-in', join(tmp, 'leaf.key'), '-pubout')).toBe(openssl('x509', '-in', join(tmp, 'leaf.pem'), '-noout', '-pubkey'));
  });

  it('verify refuses a leaf against another CA', async () => {
    const a = await fixture(1);
    const b = await fixture(2);
    writeFileSync(join(tmp, 'ca-b.pem'), b.ca.certPem);
    writeFileSync(join(tmp, 'leaf-a.pem'), a.leaf.certPem);
    const r = spawnSync('openssl', ['verify', '-attime', atTime, '-CAfile', join(tmp, 'ca-b.pem'), join(tmp, 'leaf-a.pem')], { encoding: 'utf8' });
    expect(r.status).not.toBe(0);
  });

  it('a leaf issued under an openssl-made CA (UTF8String names, PKCS#8 key) verifies with openssl', async () => {
    const key = join(tmp, 'ossl-ca.key');
    const crt = join(tmp, 'ossl-ca.pem');
    openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', crt, '-days', '36500', '-subj', '/O=Acme Corp/CN=Acme Root CA');
    const ca = { certPem: openssl('x509', '-in', crt), keyPem: openssl('pkey', '-in', key) };
    const now = Date.now();
    const leaf = await issueCertificate(ca, { commonName: 'svc', dnsNames: ['svc.local'] }, new SeededRng(9), now);
    const t = tbs(leaf.certPem);
    expect(t.issuer.raw.equals(tbs(ca.certPem).subject.raw)).toBe(true);
    writeFileSync(join(tmp, 'ossl-leaf.pem'), leaf.certPem);
    expect(openssl('verify', '-CAfile', crt, join(tmp, 'ossl-leaf.pem'))).toContain('ossl-leaf.pem: OK');
    expect(verifyLeaf(leaf.certPem, leaf.keyPem, ca.certPem, now).ok).toBe(true);
  });

  it('caCertHash is the sha256 of the SPKI DER, as `openssl x509 -pubkey | openssl pkey -pubin -outform der | sha256sum`', async () => {
    const { ca } = await fixture();
    writeFileSync(join(tmp, 'hash-ca.pem'), ca.certPem);
    const pub = openssl('x509', '-in', join(tmp, 'hash-ca.pem'), '-noout', '-pubkey');
    writeFileSync(join(tmp, 'hash-ca.pub'), pub);
    const spki = execFileSync('openssl', ['pkey', '-pubin', '-in', join(tmp, 'hash-ca.pub'), '-outform', 'der']);
    expect(caCertHash(ca.certPem)).toBe(`sha256:${createHash('sha256').update(spki).digest('hex')}`);
  });
});

describe('caCertHash', () => {
  it('is the same on repeated calls and differs between CAs', async () => {
    const a = (await fixture(1)).ca.certPem;
    const b = (await fixture(2)).ca.certPem;
    const h = caCertHash(a);
    expect(h).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(caCertHash(a)).toBe(h);
    expect(caCertHash(b)).not.toBe(h);
    expect(h).toBe(`sha256:${createHash('sha256').update(tbs(a).spki.raw).digest('hex')}`);
  });
});

describe('verifyLeaf', () => {
  const at = NOW + 1000;

  it('accepts a leaf with its key under its CA, with subject, organizations and SANs, on first and cached calls', async () => {
    const { ca, leaf } = await fixture();
    const expected = { ok: true, subject: 'CN=system:node:w-1, O=system:nodes', organizations: ['system:nodes'], dnsNames: ['w-1', 'w-1.cluster.local'], ips: ['10.0.0.5', 'FD00:0:0:0:0:0:0:1'] };
    expect(verifyLeaf(leaf.certPem, leaf.keyPem, ca.certPem, at)).toEqual(expected);
    const second = verifyLeaf(leaf.certPem, leaf.keyPem, ca.certPem, at + 1);
    expect(second).toEqual(expected);
    second.dnsNames!.push('mutated'); // callers own their answer
    second.organizations!.push('mutated');
    expect(verifyLeaf(leaf.certPem, leaf.keyPem, ca.certPem, at)).toEqual(expected);
  });

  it('rejects a leaf of another CA, first and second time, also after a success with its own CA', async () => {
    const a = await fixture(1);
    const b = await fixture(2);
    expect(verifyLeaf(a.leaf.certPem, a.leaf.keyPem, a.ca.certPem, at).ok).toBe(true);
    for (let i = 0; i < 2; i++) {
      const r = verifyLeaf(a.leaf.certPem, a.leaf.keyPem, b.ca.certPem, at);
      expect(r).toMatchObject({ ok: false, reason: 'certificate is not signed by the cluster CA', subject: 'CN=system:node:w-1, O=system:nodes' });
    }
    expect(verifyLeaf(a.leaf.certPem, a.leaf.keyPem, a.ca.certPem, at).ok).toBe(true);
  });

  it('rejects a mismatched private key, first and second time, also after a success with the right key', async () => {
    const { ca, leaf, plain } = await fixture(3);
    expect(verifyLeaf(leaf.certPem, leaf.keyPem, ca.certPem, at).ok).toBe(true);
    for (let i = 0; i < 2; i++) {
      expect(verifyLeaf(leaf.certPem, plain.keyPem, ca.certPem, at)).toMatchObject({ ok: false, reason: 'private key does not match the certificate' });
    }
    const garbage = '-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n';
    for (let i = 0; i < 2; i++) expect(verifyLeaf(leaf.certPem, garbage, ca.certPem, at).reason).toMatch(/^private key does not parse: /);
    expect(verifyLeaf(leaf.certPem, leaf.keyPem, ca.certPem, at).ok).toBe(true);
  });

  it('checks the validity window on every call, cached or not', async () => {
    const { ca, leaf } = await fixture(4);
    const sec = Math.floor(NOW / 1000) * 1000;
    const from = sec - 60_000;
    const to = sec + 365 * DAY;
    expect(verifyLeaf(leaf.certPem, leaf.keyPem, ca.certPem, at).ok).toBe(true); // now cached
    for (let i = 0; i < 2; i++) {
      const early = verifyLeaf(leaf.certPem, leaf.keyPem, ca.certPem, from - 1);
      expect(early.ok).toBe(false);
      expect(early.reason).toBe(`certificate not valid at ${new Date(from - 1).toISOString()} (valid Jan  2 03:03:05 2025 GMT .. Jan  2 03:04:05 2026 GMT)`);
      const late = verifyLeaf(leaf.certPem, leaf.keyPem, ca.certPem, to + 1);
      expect(late.ok).toBe(false);
      expect(late.reason).toMatch(/^certificate not valid at 2026-01-02T03:04:05.001Z /);
    }
    expect(verifyLeaf(leaf.certPem, leaf.keyPem, ca.certPem, from).ok).toBe(true);
    expect(verifyLeaf(leaf.certPem, leaf.keyPem, ca.certPem, to).ok).toBe(true);
    // An expired certificate with the wrong key: the time is reported first, as before.
    const other = await fixture(5);
    expect(verifyLeaf(leaf.certPem, other.leaf.keyPem, ca.certPem, to + 1).reason).toMatch(/^certificate not valid at /);
  });

  it('reports what does not parse', async () => {
    const { ca, leaf } = await fixture(6);
    expect(verifyLeaf('not a certificate', leaf.keyPem, ca.certPem, at).reason).toMatch(/^certificate does not parse: /);
    expect(verifyLeaf(leaf.certPem, leaf.keyPem, 'not a CA', at).reason).toMatch(/^CA certificate does not parse: /);
    expect(verifyLeaf(leaf.certPem, leaf.keyPem, 'not a CA', at).reason).toMatch(/^CA certificate does not parse: /);
    expect(verifyLeaf(leaf.certPem, leaf.keyPem, ca.certPem, at).ok).toBe(true);
  });
});
