/**
 * The in-cluster layout of the Cluster API managers and the HCS provider
 * (src/harness/realcluster/kind/capi-incluster.ts, provider-incluster.ts): what clusterctl
 * and cert-manager would do to upstream's kustomized manifests, checked on a
 * small kustomize-shaped input (runs everywhere) and on the real rendered
 * v1.10.10 manifests when tools/kind/images.sh has rendered them.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SeededRng } from '../../src/core/rng.js';
import { generateCA, issueCertificate } from '../../src/core/pki/index.js';
import { findCapiBinaries } from '../../src/harness/realcluster/upstream/capi-binaries.js';
import { KEEP_LABEL, managerImage, renderManager, substituteVariables, type Manifest } from '../../src/harness/realcluster/kind/capi-incluster.js';
import { PROVIDER_DEPLOYMENT_NAME, providerClusterRole, providerManifests } from '../../src/harness/realcluster/kind/provider-incluster.js';
import { parseLoopbackAddr } from '../../src/product/provider/process.js';
import { providerOptions } from '../../src/harness/cli/provider.js';
import { request as httpsRequest } from 'node:https';
import { loopbackTls } from '../../src/world/facade/auth.js';
import { CloudFront } from '../../src/harness/realcluster/external.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const KUSTOMIZED = `apiVersion: v1
kind: Namespace
metadata:
  name: capi-system
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    cert-manager.io/inject-ca-from: capi-system/capi-serving-cert
  name: machines.cluster.x-k8s.io
spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service: { name: capi-webhook-service, namespace: capi-system, path: /convert }
      conversionReviewVersions: [v1]
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: { name: capi-selfsigned-issuer, namespace: capi-system }
spec: { selfSigned: {} }
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: capi-serving-cert, namespace: capi-system }
spec:
  dnsNames: [capi-webhook-service.capi-system.svc, capi-webhook-service.capi-system.svc.cluster.local]
  issuerRef: { kind: Issuer, name: capi-selfsigned-issuer }
  secretName: capi-webhook-service-cert
  subject: { organizations: [k8s-sig-cluster-lifecycle] }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  annotations:
    cert-manager.io/inject-ca-from: capi-system/capi-serving-cert
  name: capi-validating-webhook-configuration
webhooks:
- name: validation.machine.cluster.x-k8s.io
  clientConfig:
    service: { name: capi-webhook-service, namespace: capi-system, path: /validate-cluster-x-k8s-io-v1beta1-machine }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: capi-controller-manager, namespace: capi-system }
spec:
  template:
    spec:
      containers:
      - name: manager
        image: gcr.io/k8s-staging-cluster-api/cluster-api-controller:main
        imagePullPolicy: Always
        args: ["--leader-elect", "--feature-gates=MachinePool=\${EXP_MACHINE_POOL:=true}"]
`;

const find = (objs: Manifest[], kind: string): Manifest => objs.find((o) => o.kind === kind)!;
const unb64 = (s: string): string => Buffer.from(s, 'base64').toString('utf8');

describe('Cluster API managers in the cluster, as clusterctl init + cert-manager lay them out', () => {
  it('replaces cert-manager: a serving certificate for the Service DNS names in the Certificate\'s Secret, its CA in every caBundle', { timeout: 20_000 }, async () => {
    const r = await renderManager('core', KUSTOMIZED, { version: 'v1.10.10', rng: new SeededRng(1), nowMs: NOW });
    expect(r.namespace).toBe('capi-system');
    expect(r.deployment).toBe('capi-controller-manager');
    expect(r.objects.some((o) => o.apiVersion.startsWith('cert-manager.io/'))).toBe(false);
    const secret = find(r.objects, 'Secret') as Manifest & { type: string; data: Record<string, string> };
    expect(secret.metadata).toMatchObject({ name: 'capi-webhook-service-cert', namespace: 'capi-system', labels: { [KEEP_LABEL]: 'true' } });
    expect(secret.type).toBe('kubernetes.io/tls');
    const cert = new X509Certificate(unb64(secret.data['tls.crt']!));
    const ca = new X509Certificate(unb64(secret.data['ca.crt']!));
    expect(cert.checkIssued(ca) && cert.verify(ca.publicKey)).toBe(true);
    expect(cert.subjectAltName).toContain('DNS:capi-webhook-service.capi-system.svc');
    expect(cert.subjectAltName).toContain('DNS:capi-webhook-service.capi-system.svc.cluster.local');
    const vwc = find(r.objects, 'ValidatingWebhookConfiguration') as Manifest & { webhooks: { clientConfig: { caBundle: string; service: unknown } }[] };
    expect(unb64(vwc.webhooks[0]!.clientConfig.caBundle)).toBe(unb64(secret.data['ca.crt']!));
    expect(vwc.webhooks[0]!.clientConfig.service).toBeDefined();
    const crd = find(r.objects, 'CustomResourceDefinition') as Manifest & { spec: { conversion: { webhook: { clientConfig: { caBundle: string } } } } };
    expect(unb64(crd.spec.conversion.webhook.clientConfig.caBundle)).toBe(unb64(secret.data['ca.crt']!));
  });

  it('uses the release image names with IfNotPresent and clusterctl\'s variable defaults; Secrets before the Deployment, webhooks last', { timeout: 20_000 }, async () => {
    const r = await renderManager('core', KUSTOMIZED, { version: 'v1.10.10', rng: new SeededRng(2), nowMs: NOW });
    const dep = find(r.objects, 'Deployment') as Manifest & { spec: { template: { spec: { containers: { image: string; imagePullPolicy: string; args: string[] }[] } } } };
    const c = dep.spec.template.spec.containers[0]!;
    expect(c.image).toBe(managerImage('core', 'v1.10.10'));
    expect(c.image).toBe('registry.k8s.io/cluster-api/cluster-api-controller:v1.10.10');
    expect(c.imagePullPolicy).toBe('IfNotPresent');
    expect(c.args).toContain('--feature-gates=MachinePool=true');
    const kinds = r.objects.map((o) => o.kind);
    expect(kinds.indexOf('Secret')).toBeLessThan(kinds.indexOf('Deployment'));
    expect(kinds.indexOf('Namespace')).toBe(0);
    expect(kinds.at(-1)).toBe('ValidatingWebhookConfiguration');
    expect(substituteVariables('x=${A:=1} y=${B:=2}', { B: '3' })).toBe('x=1 y=3');
  });

  it('refuses what it cannot complete, naming it (negative cases)', { timeout: 20_000 }, async () => {
    expect(() => substituteVariables('--x=${NO_DEFAULT}', {}, 'core manifests')).toThrow(/core manifests: variable \$\{NO_DEFAULT\} has no value and no default/);
    expect(() => substituteVariables('--x=${EMPTY:=}', {}, 'core manifests')).toThrow(/variable \$\{EMPTY\}/);
    // A webhook configuration without the CA injection annotation would be installed without a caBundle: refused.
    const noInject = KUSTOMIZED.replace(/ {2}annotations:\n {4}cert-manager.io\/inject-ca-from: capi-system\/capi-serving-cert\n {2}name: capi-validating/, '  name: capi-validating');
    await expect(renderManager('core', noInject, { version: 'v1', rng: new SeededRng(3), nowMs: NOW })).rejects.toThrow(/ValidatingWebhookConfiguration capi-validating-webhook-configuration has no cert-manager.io\/inject-ca-from/);
    // A CA asked for from a Certificate the manifests do not define.
    const wrong = KUSTOMIZED.replace('inject-ca-from: capi-system/capi-serving-cert\n  name: machines', 'inject-ca-from: capi-system/other-cert\n  name: machines');
    await expect(renderManager('core', wrong, { version: 'v1', rng: new SeededRng(4), nowMs: NOW })).rejects.toThrow(/CustomResourceDefinition machines.cluster.x-k8s.io asks for the CA of Certificate capi-system\/other-cert/);
    await expect(renderManager('core', KUSTOMIZED.split('---\n').slice(1).join('---\n'), { version: 'v1', rng: new SeededRng(5), nowMs: NOW })).rejects.toThrow(/no Namespace/);
  });

  const capi = findCapiBinaries();
  const rendered = 'missing' in capi ? undefined : join(capi.dir, 'config');
  it.skipIf(!rendered || !existsSync(join(rendered, 'controlplane.yaml')))('the real v1.10.10 manifests (tools/kind/images.sh): every webhook and conversion clientConfig gets a caBundle, no variable is left', { timeout: 60_000 }, async () => {
    for (const m of ['core', 'bootstrap', 'controlplane'] as const) {
      const r = await renderManager(m, readFileSync(join(rendered!, `${m}.yaml`), 'utf8'), { version: 'v1.10.10', rng: new SeededRng(6), nowMs: NOW });
      const text = JSON.stringify(r.objects);
      expect(text).not.toMatch(/\$\{/);
      expect(text).not.toContain('cert-manager.io/v1');
      for (const o of r.objects) {
        if (o.kind.endsWith('WebhookConfiguration')) for (const w of (o as unknown as { webhooks: { clientConfig: { caBundle?: string } }[] }).webhooks) expect(w.clientConfig.caBundle, `${o.metadata.name}`).toBeTruthy();
        const conv = (o as unknown as { spec?: { conversion?: { strategy?: string; webhook?: { clientConfig?: { caBundle?: string } } } } }).spec?.conversion;
        if (o.kind === 'CustomResourceDefinition' && conv?.strategy === 'Webhook') expect(conv.webhook?.clientConfig?.caBundle, o.metadata.name).toBeTruthy();
      }
      expect(r.namespace).toBe({ core: 'capi-system', bootstrap: 'capi-kubeadm-bootstrap-system', controlplane: 'capi-kubeadm-control-plane-system' }[m]);
    }
  });
});

describe('the HCS provider as deployment/hcs-controller-manager', () => {
  it('configured for the endpoint on the kind network, its CA trusted, in-cluster config, health on the pod address', { timeout: 20_000 }, async () => {
    const rng = new SeededRng(7);
    const ca = await generateCA(rng, NOW, 'cloud-ca');
    const serving = await issueCertificate(ca, { commonName: 'cloud', ips: ['172.18.0.1'] }, rng, NOW);
    const objs = providerManifests({ image: 'hcs-testbed/provider:x', cloudUrl: 'https://172.18.0.1:21000', cloudCa: ca, cloudServing: serving, project: { id: 'p', ak: 'AK', sk: 'SK', region: 'r' }, speed: 20 });
    const dep = objs.find((o) => o.kind === 'Deployment') as Manifest & { spec: { template: { spec: { containers: { args: string[]; env: { name: string }[]; command: string[] }[] } } } };
    expect(dep.metadata).toMatchObject({ name: PROVIDER_DEPLOYMENT_NAME, namespace: 'cpaas-system' });
    const c = dep.spec.template.spec.containers[0]!;
    expect(c.command).toEqual(['node', 'bin/hcs-testbed.mjs', 'provider']);
    expect(c.args).toEqual(['--health-addr=$(POD_IP):8081', '--speed=20']);
    expect(c.env.map((e) => e.name)).not.toContain('KUBECONFIG');
    const cm = objs.find((o) => o.kind === 'ConfigMap') as Manifest & { data: Record<string, string> };
    expect(cm.data['ca.crt']).toBe(ca.certPem);
    expect(() => providerManifests({ image: 'i', cloudUrl: 'http://172.18.0.1:1', cloudCa: ca, cloudServing: serving, project: { id: 'p', ak: 'a', sk: 's', region: 'r' } })).toThrow(/cloudUrl: .* must be https/);
    // Cluster-wide list/watch of every kind the provider informs on (its ClientNodeKube informers are unfiltered).
    const rules = providerClusterRole().rules as { resources: string[]; verbs: string[] }[];
    for (const r of ['hcsmachines', 'hcsclusters', 'hcsmachineconfigpools', 'hcsmachinetemplates', 'machines', 'clusters', 'machinedeployments', 'kubeadmcontrolplanes', 'secrets']) {
      expect(rules.some((x) => x.resources.includes(r) && x.verbs.includes('watch')), r).toBe(true);
    }
  });

  it('the provider CLI: in a pod without a kubeconfig it takes its service account; the pod address is allowed for health, nothing else', () => {
    const env = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443', HCS_CLOUD_URL: 'https://172.18.0.1:1', HCS_AK: 'a', HCS_SK: 's', HCS_PROJECT_ID: 'p', POD_IP: '10.244.0.7', HCS_HEALTH_ADDR: '10.244.0.7:8081' };
    const inPod = existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token');
    if (inPod) expect(providerOptions([], env)).toMatchObject({ kubeconfig: 'in-cluster' });
    else expect(() => providerOptions([], env)).toThrow(/--kubeconfig is required/);
    expect(parseLoopbackAddr('--health-addr', '10.244.0.7:8081', '10.244.0.7')).toEqual({ host: '10.244.0.7', port: 8081 });
    expect(() => parseLoopbackAddr('--health-addr', '10.244.0.8:8081', '10.244.0.7')).toThrow(/or the pod's address 10.244.0.7:PORT/);
    expect(() => parseLoopbackAddr('--health-addr', '0.0.0.0:8081', '10.244.0.7')).toThrow(/loopback only/);
  });
});

describe('what the run serves to the cluster\'s pods (--provider in-cluster, --capi external on kind)', () => {
  it('the workload clusters\' certificate names the address they are served on besides loopback (without it the managers\' TLS check fails)', () => {
    const withHost = new X509Certificate(loopbackTls(NOW, '172.18.0.1').server.certPem);
    expect(withHost.subjectAltName).toContain('IP Address:172.18.0.1');
    expect(withHost.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(new X509Certificate(loopbackTls(NOW).server.certPem).subjectAltName).not.toContain('172.18.0.1');
    expect(new X509Certificate(loopbackTls(NOW, 'host.docker.internal').server.certPem).subjectAltName).toContain('DNS:host.docker.internal');
  });

  it('the cloud front serves with the certificate kind up gave the provider\'s CA, at the given address', { timeout: 20_000 }, async () => {
    const rng = new SeededRng(8);
    const now = Date.now();
    const ca = await generateCA(rng, now, 'cloud-ca');
    const serving = await issueCertificate(ca, { commonName: 'cloud', ips: ['127.0.0.1'] }, rng, now);
    const front = await CloudFront.start({ host: '127.0.0.1', tls: { certPem: serving.certPem, keyPem: serving.keyPem, caPem: ca.certPem } });
    try {
      expect(front.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(front.caPem).toBe(ca.certPem);
      const status = await new Promise<number>((ok, fail) => {
        const req = httpsRequest(`${front.url}/v3/projects`, { ca: ca.certPem }, (res) => {
          res.resume();
          ok(res.statusCode ?? 0);
        });
        req.on('error', fail);
        req.end();
      });
      expect(status, 'TLS verified against the given CA; no scenario attached: 503').toBe(503);
      // Another CA does not verify it.
      const other = await generateCA(rng, now, 'other-ca');
      await expect(new Promise((ok, fail) => httpsRequest(`${front.url}/`, { ca: other.certPem }, ok).on('error', fail).end())).rejects.toThrow(/self.signed|unable to verify|certificate/i);
    } finally {
      await front.close();
    }
  });
});

