/**
 * Who may talk to the facade (docs/kube.md "Authentication"), as a kubeadm
 * apiserver authenticates:
 * - a bearer token written into the generated kubeconfig (user testbed-admin,
 *   group system:masters);
 * - over TLS, a client certificate signed by the facade's CA (the
 *   apiserver's --client-ca-file): the user is its subject's CN, the group
 *   its O (k8s.io/apiserver pkg/authentication/request/x509: CommonNameUserConversion);
 *   client-cert.kubeconfig carries one for kubernetes-admin, O=kubeadm:cluster-admins,
 *   as kubeadm's admin.conf. A certificate from another CA, or expired, authenticates nobody.
 * Every authenticated user also has the group system:authenticated. There is no
 * authorization: anyone authenticated may do anything.
 * Requests with neither are refused 401 with the apiserver's Status, except
 * /healthz, /livez, /readyz and /version, which a kubeadm apiserver shows to
 * anyone (system:public-info-viewer). The dashboard's browser holds the token
 * in an HttpOnly cookie, set by opening the login URL `serve` writes to its dashboard-url file (0600; /?token=...).
 *
 * TLS (optional, on in `hcs-testbed serve`): a CA and a serving certificate
 * for 127.0.0.1/localhost from src/core/pki, valid from the wall time (clients
 * check it against the real clock, never the simulation's); the CA goes
 * into the kubeconfig as certificate-authority-data.
 */
import { randomBytes, randomInt, timingSafeEqual, X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { FastifyRequest } from 'fastify';
import { SeededRng } from '../../core/rng.js';
import { generateCASync, issueCertificateSync, type CertKeyPair } from '../../core/pki/index.js';

export const TOKEN_COOKIE = 'hcs-testbed-token';
/** Paths a kubeadm apiserver answers without credentials (system:public-info-viewer). */
export const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version']);

export const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 } as const;

export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function cookieToken(req: FastifyRequest): string | undefined {
  const c = String(req.headers.cookie ?? '');
  for (const part of c.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === TOKEN_COOKIE) return decodeURIComponent(v.join('='));
  }
  return undefined;
}

/** Whether the Authorization header carries the token (`Bearer <token>`). */
function bearerIs(req: IncomingMessage, token: string): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(String(req.headers.authorization ?? ''));
  return m !== null && same(m[1]!, token);
}

/** Whether the request carries the token: the Authorization header, or (browser paths only) the cookie. */
export function authenticated(req: FastifyRequest, token: string, allowCookie: boolean): boolean {
  if (bearerIs(req.raw, token)) return true;
  if (allowCookie) {
    const c = cookieToken(req);
    if (c !== undefined && same(c, token)) return true;
  }
  return false;
}

/** The user a request authenticated as. */
export interface Identity {
  username: string;
  groups: string[];
  /** How: the bearer token (header or the dashboard's cookie) or a client certificate. */
  via: 'token' | 'client-certificate';
}

/** The token's user (a static token of a kubeadm cluster's admin). */
export const TOKEN_USER = { username: 'testbed-admin', groups: ['system:masters'] };
/** The user of client-cert.kubeconfig (kubeadm's admin.conf since v1.29). */
export const CERT_USER = { username: 'kubernetes-admin', group: 'kubeadm:cluster-admins' };

const withAuthenticated = (groups: string[]): string[] => [...groups.filter((g) => g !== 'system:authenticated'), 'system:authenticated'];

/**
 * Whether a client certificate is one the facade's CA signed and is inside its validity period
 * (wall time, as TLS clients check). Checked here, not by OpenSSL: the TLS servers do not pass
 * the CA to OpenSSL (`ca`), because when OpenSSL's check of a certificate fails on its signature
 * (another CA with the same subject name, as loopbackTls() makes) it leaves that error queued,
 * and Node raises it later on the connection, which the http server answers by resetting it:
 * kubectl then saw "connection reset by peer" instead of 401 on about one connection in four.
 * The kube-apiserver checks client certificates in its own code too (k8s.io/apiserver
 * pkg/authentication/request/x509: Verify against the client CA pool).
 */
export function signedBy(cert: X509Certificate, ca: X509Certificate, nowMs: number = Date.now()): boolean {
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return false;
  return Date.parse(cert.validFrom) <= nowMs && nowMs <= Date.parse(cert.validTo);
}

/** The TLS socket of a request whose client certificate `ca` signed (in its validity period); undefined otherwise. */
function verifiedPeer(req: IncomingMessage, ca: X509Certificate | undefined): Partial<TLSSocket> | undefined {
  const sock = req.socket as Partial<TLSSocket>;
  if (!ca || typeof sock.getPeerX509Certificate !== 'function') return undefined;
  const peer = sock.getPeerX509Certificate();
  return peer && signedBy(peer, ca) ? sock : undefined;
}

/** The user of a verified client certificate (signed by `ca`, in its validity period): CN and O. */
export function clientCertificateIdentity(req: FastifyRequest, ca: X509Certificate | undefined): Identity | undefined {
  const sock = verifiedPeer(req.raw, ca);
  if (!sock) return undefined;
  const cert = sock.getPeerCertificate?.();
  const subject = cert?.subject as Record<string, string | string[] | undefined> | undefined;
  const cn = subject?.CN;
  if (typeof cn !== 'string' || cn === '') return undefined;
  const o = subject?.O;
  const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
  return { username: cn, groups: withAuthenticated(groups), via: 'client-certificate' };
}

/** Who the request is: a client certificate signed by `ca`, else the token (header, or the cookie on browser paths); undefined: anonymous. */
export function identify(req: FastifyRequest, token: string, allowCookie: boolean, ca?: X509Certificate): Identity | undefined {
  const cert = clientCertificateIdentity(req, ca);
  if (cert) return cert;
  if (authenticated(req, token, allowCookie)) return { username: TOKEN_USER.username, groups: withAuthenticated(TOKEN_USER.groups), via: 'token' };
  return undefined;
}

/** Whether a raw request (an upgrade, before fastify) carries the token or a client certificate signed by `ca`. */
export function rawAuthenticated(req: IncomingMessage, token: string, ca: X509Certificate | undefined): boolean {
  return bearerIs(req, token) || verifiedPeer(req, ca) !== undefined;
}

/**
 * The answer to POST /apis/authentication.k8s.io/v1/selfsubjectreviews
 * (`kubectl auth whoami`): the request's own user, 201.
 */
export function selfSubjectReview(who: Identity, nowIso: string): Record<string, unknown> {
  return { kind: 'SelfSubjectReview', apiVersion: 'authentication.k8s.io/v1', metadata: { creationTimestamp: nowIso }, status: { userInfo: { username: who.username, groups: who.groups } } };
}

export interface ServingTls {
  ca: CertKeyPair;
  server: CertKeyPair;
}

/**
 * A fresh CA and a loopback serving certificate (wall-clock validity, 1 year); `host` (an address the server
 * also listens on, e.g. the gateway of kind's Docker network) is added to its names.
 */
export function loopbackTls(nowMs: number = Date.now(), host?: string): ServingTls {
  const rng = new SeededRng(randomInt(2 ** 31 - 1));
  const ca = generateCASync(rng, nowMs, 'hcs-testbed-facade-ca');
  const extra = host && host !== '127.0.0.1' && host !== 'localhost' ? host : undefined;
  const isIp = !!extra && /^[\d.]+$|:/.test(extra);
  const server = issueCertificateSync(ca, { commonName: 'hcs-testbed-facade', dnsNames: ['localhost', ...(extra && !isIp ? [extra] : [])], ips: ['127.0.0.1', ...(extra && isIp ? [extra] : [])], days: 365 }, rng, nowMs);
  return { ca, server };
}

/** A client certificate signed by the facade's CA: the apiserver takes CN as the user and O as the group. */
export function issueClientCertificate(tls: ServingTls, username: string, group?: string, nowMs: number = Date.now()): CertKeyPair {
  const rng = new SeededRng(randomInt(2 ** 31 - 1));
  return issueCertificateSync(tls.ca, { commonName: username, ...(group ? { organization: group } : {}), days: 365 }, rng, nowMs);
}
