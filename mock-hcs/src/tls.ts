/**
 * TLS for the standalone server (--tls-dir): a CA and a serving certificate
 * for 127.0.0.1, ::1 and localhost, made with the project's own X.509 code
 * (src/core/pki: hand-built DER, ECDSA P-256) and written to the directory so that
 * clients can trust the CA (Go: SSL_CERT_FILE; Python requests:
 * REQUESTS_CA_BUNDLE or the SDK's HttpConfig.ssl_ca_cert; Node:
 * NODE_EXTRA_CA_CERTS). An existing ca.crt + ca.key in the directory is
 * kept, so a restarted server stays trusted; the serving certificate is
 * issued anew at every start.
 *
 * The private keys (ca.key, server.key) are written with writeSecretFile: 0600
 * also over an existing 0644 file, through a new file renamed into place, so a
 * symbolic link of that name is replaced, never followed (issue 32). A kept
 * ca.key wider than 0600 is narrowed to 0600 (opened without following links).
 */
import { closeSync, constants, existsSync, fchmodSync, fstatSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { SeededRng } from '../../src/core/index.js';
import { SECRET_FILE_MODE, writeSecretFile } from '../../src/core/secret-file.js';
import { generateCASync, issueCertificateSync, type CertKeyPair } from '../../src/core/pki/index.js';

export interface TlsFiles {
  /** PEM of the serving certificate and its key (for https.createServer). */
  cert: string;
  key: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** Names the serving certificate is valid for (the loopback addresses mock-hcs listens on). */
export const TLS_NAMES = { dnsNames: ['localhost'], ips: ['127.0.0.1', '::1'] };

export function prepareTls(dir: string, nowMs: number, extraHosts: string[] = []): TlsFiles {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw new Error(`--tls-dir ${dir}: cannot create the directory: ${e instanceof Error ? e.message : String(e)}`);
  }
  // Serial numbers only: any fresh seed is fine (keys come from node:crypto).
  const rng = new SeededRng(randomBytes(4).readUInt32BE(0));
  const caFile = join(dir, 'ca.crt');
  const caKeyFile = join(dir, 'ca.key');
  let ca: CertKeyPair;
  if (existsSync(caFile) && existsSync(caKeyFile)) {
    ca = { certPem: readFileSync(caFile, 'utf8'), keyPem: readFileSync(caKeyFile, 'utf8') };
    narrowKeptKey(caKeyFile);
  } else {
    ca = generateCASync(rng, nowMs, 'mock-hcs CA');
    writeSecretFile(caKeyFile, ca.keyPem);
    writeFileSync(caFile, ca.certPem);
  }
  const ips = [...TLS_NAMES.ips, ...extraHosts.filter((h) => /^[0-9.:]+$/.test(h))];
  const dnsNames = [...TLS_NAMES.dnsNames, ...extraHosts.filter((h) => !/^[0-9.:]+$/.test(h))];
  const leaf = issueCertificateSync(ca, { commonName: 'mock-hcs', dnsNames, ips, days: 365 }, rng, nowMs);
  const certFile = join(dir, 'server.crt');
  const keyFile = join(dir, 'server.key');
  writeSecretFile(keyFile, leaf.keyPem);
  writeFileSync(certFile, leaf.certPem);
  return { cert: leaf.certPem, key: leaf.keyPem, caFile, certFile, keyFile };
}

/**
 * A kept private key readable by others is made owner-only. Opened with O_NOFOLLOW: a symbolic link
 * (the user's own arrangement, pointing at a key kept elsewhere) is left as it is, its target untouched.
 */
function narrowKeptKey(file: string): void {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    if ((e as { code?: string }).code === 'ELOOP') return;
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (st.isFile() && (st.mode & 0o777) !== SECRET_FILE_MODE) fchmodSync(fd, SECRET_FILE_MODE);
  } finally {
    closeSync(fd);
  }
}
