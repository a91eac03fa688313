/**
 * Who may talk to the facade (docs/kube.md "Authentication"): a bearer token
 * written into the generated kubeconfig, as a kubeadm cluster's admin
 * kubeconfig carries credentials. Requests without it are refused 401 with
 * the apiserver's Status, except /healthz, /livez, /readyz and /version,
 * which a kubeadm apiserver shows to anyone (system:public-info-viewer).
 * The dashboard's browser holds the token in an HttpOnly cookie, set by
 * opening the URL `serve` prints (/?token=...).
 *
 * TLS (optional, on in `hcs-testbed serve`): a CA and a serving certificate
 * for 127.0.0.1/localhost from src/pki, valid from the wall time (clients
 * check it against the real clock, never the simulation's); the CA goes
 * into the kubeconfig as certificate-authority-data.
 */
import { randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { SeededRng } from '../core/rng.js';
import { generateCASync, issueCertificateSync, type CertKeyPair } from '../pki/index.js';

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

/** Whether the request carries the token: the Authorization header, or (browser paths only) the cookie. */
export function authenticated(req: FastifyRequest, token: string, allowCookie: boolean): boolean {
  const h = String(req.headers.authorization ?? '');
  const m = /^Bearer\s+(\S+)$/i.exec(h);
  if (m && same(m[1]!, token)) return true;
  if (allowCookie) {
    const c = cookieToken(req);
    if (c !== undefined && same(c, token)) return true;
  }
  return false;
}

export interface ServingTls {
  ca: CertKeyPair;
  server: CertKeyPair;
}

/** A fresh CA and a loopback serving certificate (wall-clock validity, 1 year). */
export function loopbackTls(nowMs: number = Date.now()): ServingTls {
  const rng = new SeededRng(randomInt(2 ** 31 - 1));
  const ca = generateCASync(rng, nowMs, 'hcs-testbed-facade-ca');
  const server = issueCertificateSync(ca, { commonName: 'hcs-testbed-facade', dnsNames: ['localhost'], ips: ['127.0.0.1'], days: 365 }, rng, nowMs);
  return { ca, server };
}
