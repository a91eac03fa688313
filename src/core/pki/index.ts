/**
 * Real X.509 for the testbed (ARCHITECTURE: "certificates are real X.509
 * signed by the cluster CA"). ECDSA P-256 keys (fast to generate, so a
 * 1,000-node rollout stays quick); validity taken from the injected clock.
 *
 * Why the DER is built by hand: every Machine gets a kubelet certificate, so
 * a 1,000-node rollout issues (and the guest model and the invariants check)
 * thousands of them. A general X.509 library going through async WebCrypto
 * cost ~7.5 ms per certificate; building the few fixed structures below
 * directly and signing with node:crypto's synchronous `sign` is several times
 * cheaper, and the result is the same certificate, byte for byte in structure
 * (only the keys and signatures, random by nature, differ).
 *
 * What is built follows RFC 5280 §4.1 (Certificate, TBSCertificate) in DER
 * (X.690 §10): version v3 ([0] EXPLICIT INTEGER 2), a positive serial, the
 * ecdsa-with-SHA256 AlgorithmIdentifier without parameters (RFC 5758 §3.2),
 * issuer and subject Names (one RDN per attribute: CN, then O), validity
 * (§4.1.2.5: UTCTime for 1950–2049, GeneralizedTime otherwise, whole
 * seconds, "Z"), the SubjectPublicKeyInfo exactly as node:crypto exports it,
 * and [3] EXPLICIT extensions (§4.2.1.9 basicConstraints, §4.2.1.3
 * keyUsage, §4.2.1.12 extKeyUsage, §4.2.1.6 subjectAltName). The issuer of a
 * leaf is the CA certificate's subject, copied verbatim from its DER (§4.1.2.4
 * requires the issuer to match the CA's subject for chain building).
 * Certificates are parsed and checked with node:crypto's X509Certificate
 * (OpenSSL), never with the encoder below.
 */
import { X509Certificate, createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type { Rng } from '../rng.js';

const DAY = 86_400_000;

export interface CertKeyPair {
  certPem: string;
  keyPem: string;
}

// ---- A minimal DER encoder (ITU-T X.690 §8/§10) ----------------------------

/** Definite-length encoding: short form below 128, else 0x80|n followed by n big-endian bytes. */
function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** One TLV: identifier octet, length, contents. */
function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = content.length === 1 ? content[0]! : Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  SEQUENCE: 0x30, // constructed
  SET: 0x31, // constructed
} as const;

const seq = (...items: Buffer[]): Buffer => tlv(TAG.SEQUENCE, ...items);
const set = (...items: Buffer[]): Buffer => tlv(TAG.SET, ...items);
/** [n] EXPLICIT: context-specific, constructed (0xa0 | n), wrapping a whole TLV. */
const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 | n, inner);
/** [n] IMPLICIT on a primitive type: context-specific, primitive (0x80 | n), the contents replace the type's. */
const implicitPrimitive = (n: number, contents: Buffer): Buffer => tlv(0x80 | n, contents);
const octetString = (contents: Buffer): Buffer => tlv(TAG.OCTET_STRING, contents);
/** BIT STRING: first content octet is the number of unused bits in the last octet. */
const bitString = (contents: Buffer, unusedBits = 0): Buffer => tlv(TAG.BIT_STRING, Buffer.from([unusedBits]), contents);
const TRUE = Buffer.from([TAG.BOOLEAN, 0x01, 0xff]); // DER: TRUE is 0xff

/** Non-negative INTEGER from big-endian magnitude bytes: minimal (no leading 0x00 unless the high bit is set, X.690 §8.3.2). */
function unsignedInteger(magnitude: Buffer): Buffer {
  let i = 0;
  while (i < magnitude.length - 1 && magnitude[i] === 0) i++;
  const m = magnitude.subarray(i);
  return m.length > 0 && (m[0]! & 0x80) !== 0 ? tlv(TAG.INTEGER, Buffer.from([0]), m) : tlv(TAG.INTEGER, m.length ? m : Buffer.from([0]));
}

/** OBJECT IDENTIFIER: first two arcs as 40*a+b, then each arc base-128, high bit marking continuation (X.690 §8.19). */
function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const out: number[] = [];
  const arc = (v: number): void => {
    const groups = [v & 0x7f];
    for (v = Math.floor(v / 128); v > 0; v = Math.floor(v / 128)) groups.unshift((v & 0x7f) | 0x80);
    out.push(...groups);
  };
  arc(40 * arcs[0]! + arcs[1]!);
  for (const a of arcs.slice(2)) arc(a);
  return tlv(TAG.OID, Buffer.from(out));
}

/**
 * KeyUsage-style named BIT STRING (X.690 §11.2.2: trailing zero bits are
 * removed in DER, the unused-bit count says how many of the last octet's low
 * bits are padding). Bit 0 is the most significant bit of the first octet.
 */
function namedBits(bits: number[]): Buffer {
  const top = Math.max(...bits);
  const bytes = Buffer.alloc((top >> 3) + 1);
  for (const b of bits) bytes[b >> 3]! |= 0x80 >> (b & 7);
  return bitString(bytes, 7 - (top & 7));
}

/**
 * Time (RFC 5280 §4.1.2.5): UTCTime YYMMDDHHMMSSZ for 1950 through 2049,
 * GeneralizedTime YYYYMMDDHHMMSSZ otherwise; whole seconds (the milliseconds
 * are dropped), always UTC.
 */
function time(ms: number): Buffer {
  const d = new Date(Math.floor(ms / 1000) * 1000);
  const year = d.getUTCFullYear();
  const p2 = (n: number): string => String(n).padStart(2, '0');
  const rest = `${p2(d.getUTCMonth() + 1)}${p2(d.getUTCDate())}${p2(d.getUTCHours())}${p2(d.getUTCMinutes())}${p2(d.getUTCSeconds())}Z`;
  if (year >= 1950 && year <= 2049) return tlv(TAG.UTC_TIME, Buffer.from(`${p2(year % 100)}${rest}`, 'latin1'));
  if (year < 0 || year > 9999) throw new RangeError(`certificate time out of range: ${d.toISOString()}`);
  return tlv(TAG.GENERALIZED_TIME, Buffer.from(`${String(year).padStart(4, '0')}${rest}`, 'latin1'));
}

// ---- X.509 building blocks (RFC 5280) --------------------------------------

const OID_CN = oid('2.5.4.3');
const OID_O = oid('2.5.4.10');
const OID_BASIC_CONSTRAINTS = oid('2.5.29.19');
const OID_KEY_USAGE = oid('2.5.29.15');
const OID_EXT_KEY_USAGE = oid('2.5.29.37');
const OID_SUBJECT_ALT_NAME = oid('2.5.29.17');

/** Version ::= [0] EXPLICIT INTEGER { v3(2) }. */
const VERSION_V3 = explicit(0, tlv(TAG.INTEGER, Buffer.from([2])));
/** AlgorithmIdentifier for ecdsa-with-SHA256 (1.2.840.10045.4.3.2); parameters absent (RFC 5758 §3.2). */
const ECDSA_WITH_SHA256 = seq(oid('1.2.840.10045.4.3.2'));
/**
 * sha256WithRSAEncryption with its NULL parameters (RFC 4055 §5): the
 * signature algorithm when the CA key is RSA, as the cluster CA upstream KCP
 * generates is (sigs.k8s.io/cluster-api util/certs NewPrivateKey: RSA 2048,
 * used by util/secret/certificates.go Generate).
 */
const SHA256_WITH_RSA = seq(oid('1.2.840.113549.1.1.11'), Buffer.from([0x05, 0x00]));

/** PrintableString's alphabet (X.680 §41.4); anything else goes as UTF8String (RFC 5280 §4.1.2.6). */
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;
const directoryString = (s: string): Buffer => (PRINTABLE.test(s) ? tlv(TAG.PRINTABLE_STRING, Buffer.from(s, 'latin1')) : tlv(TAG.UTF8_STRING, Buffer.from(s, 'utf8')));

/** Name ::= SEQUENCE OF RelativeDistinguishedName; one AttributeTypeAndValue per RDN, CN first, then O. */
function name(commonName: string, organization?: string): Buffer {
  const rdn = (type: Buffer, value: string): Buffer => set(seq(type, directoryString(value)));
  return organization ? seq(rdn(OID_CN, commonName), rdn(OID_O, organization)) : seq(rdn(OID_CN, commonName));
}

/** Extension ::= SEQUENCE { extnID, critical BOOLEAN DEFAULT FALSE (omitted when false), extnValue OCTET STRING (DER of the value) }. */
const extension = (id: Buffer, critical: boolean, value: Buffer): Buffer => (critical ? seq(id, TRUE, octetString(value)) : seq(id, octetString(value)));

// KeyUsage bits (RFC 5280 §4.2.1.3).
const KU_DIGITAL_SIGNATURE = 0;
const KU_KEY_ENCIPHERMENT = 2;
const KU_KEY_CERT_SIGN = 5;

/** The CA's extensions: basicConstraints cA=TRUE, keyUsage keyCertSign|digitalSignature|keyEncipherment (both critical). */
const CA_EXTENSIONS: Buffer[] = [
  extension(OID_BASIC_CONSTRAINTS, true, seq(TRUE)),
  extension(OID_KEY_USAGE, true, namedBits([KU_DIGITAL_SIGNATURE, KU_KEY_ENCIPHERMENT, KU_KEY_CERT_SIGN])),
];
/** A leaf's fixed extensions: basicConstraints cA=FALSE (the DEFAULT, so an empty SEQUENCE), keyUsage digitalSignature|keyEncipherment (both critical), extKeyUsage serverAuth+clientAuth. */
const LEAF_EXTENSIONS: Buffer[] = [
  extension(OID_BASIC_CONSTRAINTS, true, seq()),
  extension(OID_KEY_USAGE, true, namedBits([KU_DIGITAL_SIGNATURE, KU_KEY_ENCIPHERMENT])),
  extension(OID_EXT_KEY_USAGE, false, seq(oid('1.3.6.1.5.5.7.3.1'), oid('1.3.6.1.5.5.7.3.2'))),
];

/** IPv4 as 4 octets, IPv6 as 16 (RFC 5280 §4.2.1.6 iPAddress). */
export function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  if (!isIPv6(ip)) throw new RangeError(`not an IP address: ${ip}`);
  // IPv4-embedded form (e.g. ::ffff:10.0.0.1): rewrite the dotted quad as its two 16-bit groups.
  const text = ip.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) =>
    `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`,
  );
  const groups = (s: string): number[] => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = groups(head);
  const right = groups(tail ?? '');
  const words = tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const out = Buffer.alloc(16);
  words.forEach((w, i) => out.writeUInt16BE(w, 2 * i));
  return out;
}

/** subjectAltName: GeneralNames of dNSName [2] IA5String and iPAddress [7] OCTET STRING, DNS names first. */
function subjectAltName(dnsNames: string[], ips: string[]): Buffer {
  const names = [
    ...dnsNames.map((dns) => {
      if (!/^[\x20-\x7e]*$/.test(dns)) throw new RangeError(`DNS name is not IA5 (ASCII): ${dns}`);
      return implicitPrimitive(2, Buffer.from(dns, 'latin1'));
    }),
    ...ips.map((ip) => implicitPrimitive(7, ipBytes(ip))),
  ];
  return extension(OID_SUBJECT_ALT_NAME, false, seq(...names));
}

function pem(label: string, der: Buffer): string {
  const b64 = der.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 64) lines.push(b64.slice(i, i + 64));
  // Same layout as before (64-column lines, no newline after the footer).
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----`;
}

function pemToDer(text: string, label: string): Buffer {
  const m = new RegExp(`-----BEGIN ${label}-----([\\s\\S]*?)-----END ${label}-----`).exec(text);
  if (!m) throw new Error(`no PEM ${label} block`);
  return Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64');
}

// ---- A minimal DER reader: just enough to find a certificate's subject ----

interface Tlv {
  tag: number;
  /** Offset of the identifier octet. */
  start: number;
  /** Offset of the first content octet. */
  body: number;
  /** Offset just past the contents. */
  end: number;
}

function readTlv(der: Buffer, at: number, limit = der.length): Tlv {
  if (at + 2 > limit) throw new Error('DER: truncated');
  const tag = der[at]!;
  if ((tag & 0x1f) === 0x1f) throw new Error('DER: high tag numbers are not used in certificates');
  let len = der[at + 1]!;
  let body = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new Error('DER: indefinite or oversized length');
    if (body + n > limit) throw new Error('DER: truncated length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + der[body + i]!;
    body += n;
  }
  const end = body + len;
  if (end > limit) throw new Error('DER: element runs past its container');
  return { tag, start: at, body, end };
}

/**
 * The subject Name of a certificate, as the exact DER bytes it carries:
 * Certificate ::= SEQUENCE { tbsCertificate, … }; TBSCertificate ::= SEQUENCE
 * { [0] version OPTIONAL, serialNumber, signature, issuer, validity, subject, … }.
 */
export function certificateSubjectDer(certDer: Buffer): Buffer {
  const cert = readTlv(certDer, 0);
  if (cert.tag !== TAG.SEQUENCE) throw new Error('certificate is not a SEQUENCE');
  const tbs = readTlv(certDer, cert.body, cert.end);
  if (tbs.tag !== TAG.SEQUENCE) throw new Error('tbsCertificate is not a SEQUENCE');
  let el = readTlv(certDer, tbs.body, tbs.end);
  if (el.tag === 0xa0) el = readTlv(certDer, el.end, tbs.end); // version
  const expect = [TAG.INTEGER, TAG.SEQUENCE, TAG.SEQUENCE, TAG.SEQUENCE]; // serial, signature, issuer, validity
  for (const tag of expect) {
    if (el.tag !== tag) throw new Error(`tbsCertificate: unexpected tag 0x${el.tag.toString(16)}`);
    el = readTlv(certDer, el.end, tbs.end);
  }
  if (el.tag !== TAG.SEQUENCE) throw new Error('tbsCertificate: subject is not a SEQUENCE');
  return certDer.subarray(el.start, el.end);
}

// ---- Issuing ----------------------------------------------------------------

function serial(rng: Rng): string {
  return '1' + rng.hex(15);
}

/** SubjectPublicKeyInfo prefix for a P-256 key (RFC 5480 §2): SEQUENCE { AlgorithmIdentifier { id-ecPublicKey, prime256v1 }, BIT STRING header }. */
const P256_SPKI_PREFIX = (() => {
  const spki = seq(seq(oid('1.2.840.10045.2.1'), oid('1.2.840.10045.3.1.7')), bitString(Buffer.alloc(65)));
  return spki.subarray(0, spki.length - 65);
})();

/**
 * SubjectPublicKeyInfo DER of a P-256 public key: the prefix above and the
 * uncompressed point 0x04 || X || Y. Built from the JWK coordinates because
 * node:crypto's JWK export is about ten times cheaper than its SPKI export
 * (the same bytes: checked in test/pki).
 */
export function p256Spki(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' });
  if (jwk.crv !== 'P-256' || !jwk.x || !jwk.y) throw new Error(`not a P-256 public key (${jwk.crv})`);
  const x = Buffer.from(jwk.x, 'base64url');
  const y = Buffer.from(jwk.y, 'base64url');
  if (x.length !== 32 || y.length !== 32) throw new Error('P-256 coordinates are not 32 bytes');
  return Buffer.concat([P256_SPKI_PREFIX, Buffer.from([0x04]), x, y]);
}

interface NewKey {
  /** SubjectPublicKeyInfo DER. */
  spki: Buffer;
  /** SEC1 "EC PRIVATE KEY" PEM, the form kubeadm writes. */
  keyPem: string;
  privateKey: KeyObject;
}

function newKey(): NewKey {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { spki: p256Spki(publicKey), keyPem: privateKey.export({ format: 'pem', type: 'sec1' }).toString(), privateKey };
}

interface CertFields {
  serialHex: string;
  issuer: Buffer;
  subject: Buffer;
  notBefore: number;
  notAfter: number;
  spki: Buffer;
  extensions: Buffer[];
}

/** Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue BIT STRING } (RFC 5280 §4.1). */
function buildCertificate(f: CertFields, signingKey: KeyObject): string {
  const alg = signingKey.asymmetricKeyType === 'rsa' ? SHA256_WITH_RSA : ECDSA_WITH_SHA256;
  const tbs = seq(
    VERSION_V3,
    unsignedInteger(Buffer.from(f.serialHex.length % 2 ? '0' + f.serialHex : f.serialHex, 'hex')),
    alg,
    f.issuer,
    seq(time(f.notBefore), time(f.notAfter)),
    f.subject,
    f.spki,
    explicit(3, seq(...f.extensions)),
  );
  // Ecdsa-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER } (RFC 3279 §2.2.3), which is what dsaEncoding 'der' yields; RSA: PKCS #1 v1.5.
  const signature = sign('sha256', tbs, alg === SHA256_WITH_RSA ? signingKey : { key: signingKey, dsaEncoding: 'der' });
  return pem('CERTIFICATE', seq(tbs, alg, bitString(signature)));
}

/** Bounded memo, oldest entry dropped first. */
function remember<V>(m: Map<string, V>, k: string, limit: number, make: () => V): V {
  let v = m.get(k);
  if (v === undefined) {
    v = make();
    if (m.size >= limit) m.delete(m.keys().next().value!);
    m.set(k, v);
  }
  return v;
}

/**
 * The issuing CA, decoded once per PEM (a cluster CA signs every kubelet
 * certificate of its cluster): its subject DER and its signing key.
 */
const caSubjects = new Map<string, Buffer>();
const caKeys = new Map<string, KeyObject>();
const caSubject = (pem: string): Buffer => remember(caSubjects, pem, 64, () => certificateSubjectDer(pemToDer(pem, 'CERTIFICATE')));
const caSigningKey = (pem: string): KeyObject => remember(caKeys, pem, 64, () => createPrivateKey(pem));

/** caCertHash answers per CA PEM (one per cluster). */
const caHashes = new Map<string, string>();

/**
 * "sha256:<hex>" of the CA's SubjectPublicKeyInfo, as kubeadm discovery
 * (caCertHashes) expects. Remembered per PEM: every KubeadmConfig reconcile
 * of a cluster asks for the same CA's hash, and parsing the certificate each
 * time was a measurable share of a 1,000-machine rollout.
 */
export function caCertHash(caPem: string): string {
  return remember(caHashes, caPem, 64, () => {
    const spki = new X509Certificate(caPem).publicKey.export({ type: 'spki', format: 'der' });
    return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
  });
}

/** A self-signed cluster CA ("kubernetes"), valid 10 years from `nowMs`. */
export function generateCASync(rng: Rng, nowMs: number, commonName = 'kubernetes'): CertKeyPair {
  const key = newKey();
  const subject = name(commonName);
  const certPem = buildCertificate(
    { serialHex: serial(rng), issuer: subject, subject, notBefore: nowMs - DAY, notAfter: nowMs + 3650 * DAY, spki: key.spki, extensions: CA_EXTENSIONS },
    key.privateKey,
  );
  return { certPem, keyPem: key.keyPem };
}

/** A self-signed cluster CA ("kubernetes"), valid 10 years from `nowMs`. */
export async function generateCA(rng: Rng, nowMs: number, commonName = 'kubernetes'): Promise<CertKeyPair> {
  return generateCASync(rng, nowMs, commonName);
}

export interface LeafRequest {
  /** Subject CN, e.g. system:node:<hostname>. */
  commonName: string;
  organization?: string;
  dnsNames?: string[];
  ips?: string[];
  /** Validity from now, in days (kubeadm: 365). */
  days?: number;
  /** NotBefore this long before now (ms, default 60 s; kubeadm backdates its certificates by 5 min, CertificateBackdate). */
  backdateMs?: number;
}

/** Issue a serving/client certificate signed by `ca` (BOOT-2: the kubelet certificate). */
export function issueCertificateSync(ca: CertKeyPair, req: LeafRequest, rng: Rng, nowMs: number): CertKeyPair {
  const issuer = caSubject(ca.certPem);
  const signingKey = caSigningKey(ca.keyPem);
  const key = newKey();
  const dnsNames = req.dnsNames ?? [];
  const ips = req.ips ?? [];
  const certPem = buildCertificate(
    {
      serialHex: serial(rng),
      issuer,
      subject: name(req.commonName, req.organization || undefined),
      notBefore: nowMs - (req.backdateMs ?? 60_000),
      notAfter: nowMs + (req.days ?? 365) * DAY,
      spki: key.spki,
      extensions: dnsNames.length || ips.length ? [...LEAF_EXTENSIONS, subjectAltName(dnsNames, ips)] : LEAF_EXTENSIONS,
    },
    signingKey,
  );
  return { certPem, keyPem: key.keyPem };
}

/** Issue a serving/client certificate signed by `ca` (BOOT-2: the kubelet certificate). */
export async function issueCertificate(ca: CertKeyPair, req: LeafRequest, rng: Rng, nowMs: number): Promise<CertKeyPair> {
  return issueCertificateSync(ca, req, rng, nowMs);
}

// ---- Checking ---------------------------------------------------------------

export interface ChainCheck {
  ok: boolean;
  reason?: string;
  subject?: string;
  /** The subject's organization (O) values, in order (one per RDN line of the parsed subject). */
  organizations?: string[];
  dnsNames?: string[];
  ips?: string[];
}

/** A CA PEM parsed once (or the reason it does not parse). */
const parsedCAs = new Map<string, X509Certificate | { error: string }>();
function parsedCA(pem: string): X509Certificate | { error: string } {
  return remember(parsedCAs, pem, 64, () => {
    try {
      return new X509Certificate(pem);
    } catch (e) {
      return { error: `CA certificate does not parse: ${(e as Error).message}` };
    }
  });
}

/**
 * A private key from PEM. A SEC1 "EC PRIVATE KEY" block (what issueCertificate
 * and kubeadm write) is decoded here and handed to OpenSSL as DER, which skips
 * its format probing (about half the cost); anything else, or a block that
 * does not decode, goes through createPrivateKey(pem) as before, so errors
 * read the same.
 */
function privateKeyOf(keyPem: string): KeyObject {
  if (keyPem.includes('-----BEGIN EC PRIVATE KEY-----')) {
    try {
      return createPrivateKey({ key: pemToDer(keyPem, 'EC PRIVATE KEY'), format: 'der', type: 'sec1' });
    } catch {
      // fall through: report OpenSSL's own message for the PEM
    }
  }
  return createPrivateKey(keyPem);
}

/** What verifyLeaf learns about a (leaf, key, CA) triple independently of the time of the check. */
type LeafFacts =
  | { kind: 'final'; result: ChainCheck } // does not parse: the same answer at any time
  | {
      kind: 'checked';
      base: { subject: string; organizations: string[]; dnsNames: string[]; ips: string[] };
      signedByCA: boolean;
      validFrom: string;
      validTo: string;
      fromMs: number;
      toMs: number;
      /** Reason the private key does not fit, if it does not. */
      keyProblem?: string;
    };

/**
 * One entry per leaf PEM, remembering the key and CA PEMs it was checked
 * with: another key or CA for the same leaf recomputes (and replaces) it, so
 * the facts always belong to the exact (leaf, key, CA) triple asked about.
 */
const leafFacts = new Map<string, { keyPem: string; caPem: string; facts: LeafFacts }>();
const LEAF_FACTS_LIMIT = 4096;

function computeLeafFacts(leafPem: string, keyPem: string, caPem: string): LeafFacts {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(leafPem);
  } catch (e) {
    return { kind: 'final', result: { ok: false, reason: `certificate does not parse: ${(e as Error).message}` } };
  }
  const ca = parsedCA(caPem);
  if (!(ca instanceof X509Certificate)) return { kind: 'final', result: { ok: false, reason: ca.error } };
  const san = leaf.subjectAltName ?? '';
  const dnsNames = [...san.matchAll(/DNS:([^,\s]+)/g)].map((m) => m[1]!);
  const ips = [...san.matchAll(/IP Address:([^,\s]+)/g)].map((m) => m[1]!);
  // X509Certificate.subject prints one attribute per line ("CN=...\nO=..."): the O lines, read before the join.
  const organizations = leaf.subject.split('\n').filter((l) => l.startsWith('O=')).map((l) => l.slice(2));
  const base = { subject: leaf.subject.replace(/\n/g, ', '), organizations, dnsNames, ips };
  const signedByCA = leaf.checkIssued(ca) && leaf.verify(ca.publicKey);
  let keyProblem: string | undefined;
  if (signedByCA) {
    try {
      if (!createPublicKey(privateKeyOf(keyPem)).equals(leaf.publicKey)) keyProblem = 'private key does not match the certificate';
    } catch (e) {
      keyProblem = `private key does not parse: ${(e as Error).message}`;
    }
  }
  return { kind: 'checked', base, signedByCA, validFrom: leaf.validFrom, validTo: leaf.validTo, fromMs: Date.parse(leaf.validFrom), toMs: Date.parse(leaf.validTo), keyProblem };
}

/**
 * Check that `leaf` is signed by `caPem`, valid at `nowMs`, and that `keyPem`
 * is its private key (BOOT-3). Returns a reason instead of throwing.
 *
 * Parsing, the signature and the key match do not depend on the time and are
 * remembered per (leaf, key, CA) (bounded, oldest dropped first); the
 * validity window is checked against `nowMs` on every call, since
 * certificates expire on the virtual clock.
 */
export function verifyLeaf(leafPem: string, keyPem: string, caPem: string, nowMs: number): ChainCheck {
  let entry = leafFacts.get(leafPem);
  if (!entry || entry.keyPem !== keyPem || entry.caPem !== caPem) {
    entry = { keyPem, caPem, facts: computeLeafFacts(leafPem, keyPem, caPem) };
    leafFacts.delete(leafPem);
    if (leafFacts.size >= LEAF_FACTS_LIMIT) leafFacts.delete(leafFacts.keys().next().value!);
    leafFacts.set(leafPem, entry);
  }
  const f = entry.facts;
  if (f.kind === 'final') return { ...f.result };
  // Fresh arrays per answer: callers own what they are given.
  const base = { subject: f.base.subject, organizations: [...f.base.organizations], dnsNames: [...f.base.dnsNames], ips: [...f.base.ips] };
  if (!f.signedByCA) return { ok: false, reason: 'certificate is not signed by the cluster CA', ...base };
  if (nowMs < f.fromMs || nowMs > f.toMs) {
    return { ok: false, reason: `certificate not valid at ${new Date(nowMs).toISOString()} (valid ${f.validFrom} .. ${f.validTo})`, ...base };
  }
  if (f.keyProblem) return { ok: false, reason: f.keyProblem, ...base };
  return { ok: true, ...base };
}
