/**
 * A leaf signed by an RSA cluster CA (BOOT-2, BOOT-3): upstream KCP
 * generates the cluster CA `<cluster>-ca` with an RSA 2048 key
 * (sigs.k8s.io/cluster-api util/certs NewPrivateKey, util/secret/certificates.go),
 * so on `--capi upstream` the provider signs the kubelet certificate with
 * an RSA key. The fixture CA (test/pki/fixtures/rsa-ca.*) was made with
 * `openssl genrsa -traditional 2048` + `openssl req -x509` (PKCS #1 key, as
 * KCP writes it).
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SeededRng } from '../../src/core/rng.js';
import { issueCertificate, verifyLeaf } from '../../src/core/pki/index.js';

const dir = join(import.meta.dirname, 'fixtures');
const ca = { certPem: readFileSync(join(dir, 'rsa-ca.crt'), 'utf8'), keyPem: readFileSync(join(dir, 'rsa-ca.key'), 'utf8') };

describe('certificates issued by an RSA CA (KCP-generated cluster CA)', () => {
  it('are signed with sha256WithRSAEncryption and verify against the CA (BOOT-3)', async () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const leaf = await issueCertificate(ca, { commonName: 'system:node:demo-cp-1', organization: 'system:nodes', dnsNames: ['demo-cp-1'], ips: ['192.168.1.11'] }, new SeededRng(1), now);
    const x = new X509Certificate(leaf.certPem);
    expect(x.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
    expect(x.checkIssued(new X509Certificate(ca.certPem))).toBe(true);
    expect(verifyLeaf(leaf.certPem, leaf.keyPem, ca.certPem, now)).toMatchObject({ ok: true });
    // The leaf's own key stays ECDSA P-256; only the signature algorithm follows the CA key.
    expect(x.publicKey.asymmetricKeyType).toBe('ec');
  });
});
