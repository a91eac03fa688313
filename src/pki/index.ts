/**
 * Real X.509 for the testbed (ARCHITECTURE: "certificates are real X.509
 * signed by the cluster CA"). ECDSA P-256 keys (fast to generate, so a
 * 1,000-node rollout stays quick); validity taken from the injected clock.
 */
import 'reflect-metadata'; // required by @peculiar/x509's dependency injection container
import * as x509 from '@peculiar/x509';
import { webcrypto, X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import type { Rng } from '../core/rng.js';

// @peculiar/x509 types its provider as the DOM Crypto; Node's webcrypto is that API.
x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

export interface CertKeyPair {
  certPem: string;
  keyPem: string;
}

async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
}

async function keyToPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key as unknown as webcrypto.CryptoKey));
  // Re-encode as SEC1 "EC PRIVATE KEY", the form kubeadm writes.
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'sec1' }).toString();
}

async function pemToKey(pem: string): Promise<CryptoKey> {
  const der = createPrivateKey(pem).export({ format: 'der', type: 'pkcs8' });
  return (await webcrypto.subtle.importKey('pkcs8', der, ALG, true, ['sign'])) as unknown as CryptoKey;
}

function serial(rng: Rng): string {
  return '1' + rng.hex(15);
}

/** A self-signed cluster CA ("kubernetes"), valid 10 years from `nowMs`. */
export async function generateCA(rng: Rng, nowMs: number, commonName = 'kubernetes'): Promise<CertKeyPair> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(rng),
    name: `CN=${commonName}`,
    notBefore: new Date(nowMs - DAY),
    notAfter: new Date(nowMs + 3650 * DAY),
    keys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await keyToPem(keys.privateKey) };
}

export interface LeafRequest {
  /** Subject CN, e.g. system:node:<hostname>. */
  commonName: string;
  organization?: string;
  dnsNames?: string[];
  ips?: string[];
  /** Validity from now, in days (kubeadm: 365). */
  days?: number;
}

/**
 * The issuing CA, parsed once per PEM (a cluster CA signs every kubelet
 * certificate of its cluster): the same certificate and key, without
 * re-decoding them for each leaf. Bounded, oldest dropped first.
 */
const caCerts = new Map<string, x509.X509Certificate>();
const caKeys = new Map<string, Promise<CryptoKey>>();
function remember<V>(m: Map<string, V>, k: string, make: () => V): V {
  let v = m.get(k);
  if (v === undefined) {
    v = make();
    if (m.size >= 64) m.delete(m.keys().next().value!);
    m.set(k, v);
  }
  return v;
}
const parsedCa = (pem: string): x509.X509Certificate => remember(caCerts, pem, () => new x509.X509Certificate(pem));
const caSigningKey = (pem: string): Promise<CryptoKey> => remember(caKeys, pem, () => pemToKey(pem));

/** Issue a serving/client certificate signed by `ca` (BOOT-2: the kubelet certificate). */
export async function issueCertificate(ca: CertKeyPair, req: LeafRequest, rng: Rng, nowMs: number): Promise<CertKeyPair> {
  const keys = await newKeys();
  const caCert = parsedCa(ca.certPem);
  const subject = `CN=${req.commonName}${req.organization ? `, O=${req.organization}` : ''}`;
  const sans: x509.JsonGeneralName[] = [
    ...(req.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(req.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(rng),
    subject,
    issuer: caCert.subject,
    notBefore: new Date(nowMs - 60_000),
    notAfter: new Date(nowMs + (req.days ?? 365) * DAY),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: await caSigningKey(ca.keyPem),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      ...(sans.length ? [new x509.SubjectAlternativeNameExtension(sans)] : []),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await keyToPem(keys.privateKey) };
}

export interface ChainCheck {
  ok: boolean;
  reason?: string;
  subject?: string;
  dnsNames?: string[];
  ips?: string[];
}

/**
 * Check that `leaf` is signed by `caPem`, valid at `nowMs`, and that `keyPem`
 * is its private key (BOOT-3). Returns a reason instead of throwing.
 */
export function verifyLeaf(leafPem: string, keyPem: string, caPem: string, nowMs: number): ChainCheck {
  let leaf: X509Certificate;
  let ca: X509Certificate;
  try {
    leaf = new X509Certificate(leafPem);
  } catch (e) {
    return { ok: false, reason: `certificate does not parse: ${(e as Error).message}` };
  }
  try {
    ca = new X509Certificate(caPem);
  } catch (e) {
    return { ok: false, reason: `CA certificate does not parse: ${(e as Error).message}` };
  }
  const san = leaf.subjectAltName ?? '';
  const dnsNames = [...san.matchAll(/DNS:([^,\s]+)/g)].map((m) => m[1]!);
  const ips = [...san.matchAll(/IP Address:([^,\s]+)/g)].map((m) => m[1]!);
  const base = { subject: leaf.subject.replace(/\n/g, ', '), dnsNames, ips };
  if (!leaf.checkIssued(ca) || !leaf.verify(ca.publicKey)) return { ok: false, reason: 'certificate is not signed by the cluster CA', ...base };
  if (nowMs < Date.parse(leaf.validFrom) || nowMs > Date.parse(leaf.validTo)) {
    return { ok: false, reason: `certificate not valid at ${new Date(nowMs).toISOString()} (valid ${leaf.validFrom} .. ${leaf.validTo})`, ...base };
  }
  try {
    const pub = createPublicKey(createPrivateKey(keyPem)).export({ format: 'der', type: 'spki' });
    const certPub = leaf.publicKey.export({ format: 'der', type: 'spki' });
    if (!Buffer.from(pub).equals(Buffer.from(certPub))) return { ok: false, reason: 'private key does not match the certificate', ...base };
  } catch (e) {
    return { ok: false, reason: `private key does not parse: ${(e as Error).message}`, ...base };
  }
  return { ok: true, ...base };
}
