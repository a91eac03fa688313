/**
 * The facade's decoding of protobuf request bodies (src/world/facade/protobuf/decode.ts),
 * which controller-runtime clients send for built-in kinds: what the upstream
 * managers need of a workload cluster's API (`run --capi upstream`).
 */
import { describe, expect, it } from 'vitest';
import { decodeKubeProtobuf, ProtobufError } from '../../src/world/facade/protobuf/decode.js';

/** Minimal protobuf writer for the test (varint tags, length-delimited fields). */
const varint = (n: number): number[] => { const out: number[] = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
const ld = (no: number, bytes: Buffer | string): Buffer => { const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes, 'utf8'); return Buffer.from([...varint((no << 3) | 2), ...varint(b.length), ...b]); };
const vf = (no: number, v: number): Buffer => Buffer.from([...varint(no << 3), ...varint(v)]);
const entry = (no: number, k: string, v: Buffer | string): Buffer => ld(no, Buffer.concat([ld(1, k), ld(2, v)]));
const envelope = (apiVersion: string, kind: string, raw: Buffer): Buffer => Buffer.concat([Buffer.from('k8s\0', 'binary'), ld(1, Buffer.concat([ld(1, apiVersion), ld(2, kind)])), ld(2, raw)]);

describe('facade: protobuf request bodies (controller-runtime sends built-in kinds as application/vnd.kubernetes.protobuf)', () => {
  it('decodes a bootstrap-token Secret as CABPK creates it in a workload cluster (k8s.io/api core/v1 generated.proto field numbers)', () => {
    const meta = Buffer.concat([ld(1, 'bootstrap-token-abcdef'), ld(3, 'kube-system'), entry(11, 'a', 'b'), ld(14, 'f1'), ld(8, vf(1, 1_767_225_600))]);
    const secret = Buffer.concat([ld(1, meta), entry(2, 'token-id', Buffer.from('abcdef')), entry(2, 'usage-bootstrap-authentication', Buffer.from('true')), ld(3, 'bootstrap.kubernetes.io/token'), vf(5, 1)]);
    expect(decodeKubeProtobuf(envelope('v1', 'Secret', secret))).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system', labels: { a: 'b' }, finalizers: ['f1'], creationTimestamp: '2026-01-01T00:00:00Z' },
      data: { 'token-id': Buffer.from('abcdef').toString('base64'), 'usage-bootstrap-authentication': Buffer.from('true').toString('base64') },
      type: 'bootstrap.kubernetes.io/token',
      immutable: true,
    });
  });

  it('decodes a ConfigMap; refuses other kinds with 415 naming them, and a body without the magic with 400', () => {
    const cm = Buffer.concat([ld(1, ld(1, 'kubeadm-config')), entry(2, 'ClusterConfiguration', 'kind: ClusterConfiguration\n')]);
    expect(decodeKubeProtobuf(envelope('v1', 'ConfigMap', cm))).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'kubeadm-config' }, data: { ClusterConfiguration: 'kind: ClusterConfiguration\n' } });
    const e415 = (() => { try { decodeKubeProtobuf(envelope('apps/v1', 'Deployment', Buffer.alloc(0))); } catch (e) { return e; } })();
    expect(e415).toBeInstanceOf(ProtobufError);
    expect((e415 as ProtobufError).code).toBe(415);
    expect((e415 as Error).message).toContain('Deployment');
    expect(() => decodeKubeProtobuf(Buffer.from('{"kind":"Secret"}'))).toThrow(/magic/);
  });
  it('decodes kubeadm\'s RBAC as KCP writes it before a rollout (k8s.io/api rbac/v1 generated.proto; PolicyRule, Subject, RoleRef)', () => {
    const rule = Buffer.concat([ld(1, 'get'), ld(2, ''), ld(3, 'nodes')]);
    const role = Buffer.concat([ld(1, ld(1, 'kubeadm:get-nodes')), ld(2, rule)]);
    expect(decodeKubeProtobuf(envelope('rbac.authorization.k8s.io/v1', 'ClusterRole', role))).toEqual({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'kubeadm:get-nodes' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['nodes'] }] });
    const binding = Buffer.concat([ld(1, Buffer.concat([ld(1, 'kubeadm:kubelet-config'), ld(3, 'kube-system')])), ld(2, Buffer.concat([ld(1, 'Group'), ld(2, 'rbac.authorization.k8s.io'), ld(3, 'system:nodes')])), ld(3, Buffer.concat([ld(1, 'rbac.authorization.k8s.io'), ld(2, 'Role'), ld(3, 'kubeadm:kubelet-config')]))]);
    expect(decodeKubeProtobuf(envelope('rbac.authorization.k8s.io/v1', 'RoleBinding', binding))).toEqual({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'kubeadm:kubelet-config', namespace: 'kube-system' },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:nodes' }],
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kubeadm:kubelet-config' },
    });
    expect(() => decodeKubeProtobuf(envelope('rbac.authorization.k8s.io/v1', 'PolicyRule', rule))).toThrow(ProtobufError);
  });
  it('decodes a policy/v1 Eviction with its DeleteOptions, as the Machine controller\'s drain sends it (cluster-api internal/controllers/machine/drain/drain.go evictPod)', () => {
    const opts = Buffer.concat([vf(1, 30), ld(2, Buffer.concat([ld(1, 'uid-1'), ld(2, '42')])), ld(4, 'Background'), ld(5, 'All')]);
    const eviction = Buffer.concat([ld(1, Buffer.concat([ld(1, 'coredns-abc'), ld(3, 'kube-system')])), ld(2, opts)]);
    expect(decodeKubeProtobuf(envelope('policy/v1', 'Eviction', eviction))).toEqual({
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'coredns-abc', namespace: 'kube-system' },
      deleteOptions: { gracePeriodSeconds: 30, preconditions: { uid: 'uid-1', resourceVersion: '42' }, propagationPolicy: 'Background', dryRun: ['All'] },
    });
    // DeleteOptions is also a DELETE's body (delete --dry-run=server from a protobuf client, issue 24); its parts are not bodies.
    expect(decodeKubeProtobuf(envelope('v1', 'DeleteOptions', opts))).toMatchObject({ kind: 'DeleteOptions', dryRun: ['All'] });
    expect(() => decodeKubeProtobuf(envelope('v1', 'Preconditions', Buffer.concat([ld(1, 'uid-1')])))).toThrow(ProtobufError);
  });
  it('decodes a core/v1 Namespace as `kubectl create namespace` sends it (k8s.io/api core/v1 generated.proto; was 415, issue 24)', () => {
    const ns = Buffer.concat([ld(1, Buffer.concat([ld(1, 'team-a'), ld(11, Buffer.concat([ld(1, 'env'), ld(2, 'dev')]))])), ld(2, ld(1, 'kubernetes'))]);
    expect(decodeKubeProtobuf(envelope('v1', 'Namespace', ns))).toEqual({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { env: 'dev' } }, spec: { finalizers: ['kubernetes'] } });
    expect(() => decodeKubeProtobuf(envelope('v1', 'NamespaceSpec', ld(1, 'kubernetes')))).toThrow(ProtobufError);
  });
});
