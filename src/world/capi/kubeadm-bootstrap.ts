/**
 * Kubeadm bootstrap provider (CAPBK), modelled on cluster-api
 * bootstrap/kubeadm/internal/controllers/kubeadmconfig_controller.go (v1beta1):
 * - a control plane Machine (label cluster.x-k8s.io/control-plane) whose config
 *   has no joinConfiguration gets `kubeadm init` data (handleClusterNotInitialized:
 *   ClusterConfiguration + InitConfiguration in /run/kubeadm/kubeadm.yaml, CA
 *   certificate and key); it does not wait for ControlPlaneInitialized;
 * - control plane joins (joinConfiguration.controlPlane) and worker joins:
 * - waits for an owner Machine, the Cluster's infrastructureReady, an
 *   initialized control plane (ControlPlaneInitialized condition) and
 *   spec.controlPlaneEndpoint;
 * - looks up (or, simplification, generates with src/core/pki) the cluster CA secret
 *   `<cluster>-ca`;
 * - creates a bootstrap token (Secret bootstrap-token-<id> in the workload
 *   cluster's kube-system, 15 min TTL as upstream) and renders the join
 *   cloud-init (cloudinit.ts);
 * - stores it in Secret `<config>` (type cluster.x-k8s.io/secret, data.value,
 *   data.format), owned by the config; status.dataSecretName + ready.
 * Not modelled: the init lock, token refresh/rotation, the full certificate
 * set (etcd / front-proxy / service-account keys), ignition, MachinePools.
 */
import { BOOTSTRAP_VERSION, LABEL_CLUSTER_NAME, LABEL_CONTROL_PLANE } from '../../product/api/capi.js';
import type { Cluster, KubeadmConfig, KubeadmConfigStatus, Machine } from '../../product/api/capi.js';
import { secretValue, type Secret } from '../../product/api/core.js';
import { rfc3339 } from '../../core/clock.js';
import { KubeApiError } from '../../core/kube/errors.js';
import { getShared } from '../../core/kube/client.js';
import type { KubeObject } from '../../core/kube/types.js';
import { isDeleting, ownerRef } from '../../core/kube/types.js';
import { caCertHash, generateCA } from '../../core/pki/index.js';
import type { Controller, Result } from '../../core/runtime/manager.js';
import type { ControllerContext, Logger } from '../../core/runtime/context.js';
import { renderInitCloudInit, renderJoinCloudInit } from './cloudinit.js';
import { CAPBK_DEPLOYMENT, SECRET_TYPE_CLUSTER, sameJson, getCondition, keyFor, markFalse, markTrue, splitKey } from './util.js';

export const KUBEADMCONFIG_CONTROLLER = 'capi-kubeadmconfig';
/** Upstream DefaultTokenTTL. */
export const BOOTSTRAP_TOKEN_TTL_MS = 15 * 60_000;

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

export class KubeadmConfigReconciler implements Controller {
  readonly name = KUBEADMCONFIG_CONTROLLER;
  private readonly log: Logger;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logs.logger(CAPBK_DEPLOYMENT, 'kubeadmconfig');
  }

  async reconcile(key: string): Promise<Result | void> {
    const { namespace, name } = splitKey(key);
    // Read-only reads (shared where the store shares): status is written from a copy.
    const cfg: KubeadmConfig | undefined = await getShared<KubeadmConfig>(this.ctx.mgmt, { kind: 'KubeadmConfig', namespace, name });
    if (!cfg || isDeleting(cfg)) return;
    const owner = cfg.metadata.ownerReferences?.find((r) => r.kind === 'Machine');
    if (!owner) return; // "Waiting for Machine Controller to set OwnerRef on the KubeadmConfig"
    const machine: Machine | undefined = await getShared<Machine>(this.ctx.mgmt, { kind: 'Machine', namespace, name: owner.name });
    if (!machine) return;
    if (cfg.status?.ready && cfg.status.dataSecretName) return;

    const now = this.ctx.clock.now();
    const status: KubeadmConfigStatus = structuredClone(cfg.status ?? {});
    const cluster: Cluster | undefined = await getShared<Cluster>(this.ctx.mgmt, { kind: 'Cluster', namespace, name: machine.spec.clusterName });
    const wait = async (reason: string, message: string): Promise<void> => {
      status.conditions = markFalse(status.conditions, 'DataSecretAvailable', reason, 'Info', message, now);
      status.conditions = markFalse(status.conditions, 'Ready', reason, 'Info', message, now);
      status.observedGeneration = cfg.metadata.generation;
      await this.writeStatus(cfg, status);
    };
    if (!cluster) return wait('WaitingForClusterInfrastructure', `Cluster ${machine.spec.clusterName} not found`);
    if (cluster.spec.paused) return;
    if (!cluster.status?.infrastructureReady) return wait('WaitingForClusterInfrastructure', 'Waiting for the cluster infrastructure to be ready');
    // A control plane Machine whose config has no joinConfiguration runs `kubeadm init` (the first control plane node);
    // every other node joins and waits for the control plane to be initialized.
    const controlPlane = machine.metadata.labels !== undefined && LABEL_CONTROL_PLANE in machine.metadata.labels;
    const init = controlPlane && !cfg.spec.joinConfiguration;
    if (!init && getCondition(cluster.status.conditions, 'ControlPlaneInitialized')?.status !== 'True') {
      return wait('WaitingForControlPlaneAvailable', 'Waiting for the control plane to be initialized');
    }
    const ep = cluster.spec.controlPlaneEndpoint;
    if (!ep?.host || !ep.port) return wait('WaitingForControlPlaneAvailable', 'Waiting for Cluster Controller to set Cluster.Spec.ControlPlaneEndpoint');

    const ca = await this.lookupOrGenerateCA(cluster);
    const caPem = ca.certPem;
    status.conditions = markTrue(status.conditions, 'CertificatesAvailable', now);
    const token = await this.createBootstrapToken(cluster);
    const userData = init
      ? renderInitCloudInit({
          spec: cfg.spec,
          controlPlaneEndpoint: `${ep.host}:${ep.port}`,
          clusterName: cluster.metadata.name,
          kubernetesVersion: machine.spec.version ?? cfg.spec.clusterConfiguration?.kubernetesVersion ?? '',
          token,
          caCertPem: caPem,
          caKeyPem: ca.keyPem,
          ...(cluster.spec.clusterNetwork?.pods?.cidrBlocks?.[0] ? { podSubnet: cluster.spec.clusterNetwork.pods.cidrBlocks[0] } : {}),
          ...(cluster.spec.clusterNetwork?.services?.cidrBlocks?.[0] ? { serviceSubnet: cluster.spec.clusterNetwork.services.cidrBlocks[0] } : {}),
        })
      : renderJoinCloudInit({
          spec: cfg.spec,
          apiServerEndpoint: `${ep.host}:${ep.port}`,
          token,
          caCertHashes: [caCertHash(caPem)],
          caCertPem: caPem,
          ...(controlPlane && cfg.spec.joinConfiguration?.controlPlane ? { caKeyPem: ca.keyPem } : {}),
        });
    await this.storeBootstrapData(cfg, cluster, userData);
    status.dataSecretName = cfg.metadata.name;
    status.ready = true;
    status.conditions = markTrue(status.conditions, 'DataSecretAvailable', now);
    status.conditions = markTrue(status.conditions, 'Ready', now);
    status.observedGeneration = cfg.metadata.generation;
    await this.writeStatus(cfg, status);
    this.ctx.events.record({
      source: 'capi',
      type: 'bootstrap.data-ready',
      message: `KubeadmConfig ${key}: bootstrap data secret ${cfg.metadata.name} ready (${init ? 'init' : controlPlane ? 'control plane join' : 'join'} ${ep.host}:${ep.port})`,
      data: { kubeadmconfig: cfg.metadata.name, machine: machine.metadata.name, secret: cfg.metadata.name, mode: init ? 'init' : controlPlane ? 'control-plane-join' : 'join' },
      rules: ['BOOT-1'],
    });
    this.log.info('bootstrap data ready', { kubeadmconfig: key, machine: machine.metadata.name });
  }

  private async writeStatus(cfg: KubeadmConfig, status: KubeadmConfigStatus): Promise<void> {
    if (sameJson(status, cfg.status ?? {})) return;
    await this.ctx.mgmt.updateStatus<KubeadmConfig>({ ...cfg, status });
  }

  /** The cluster CA `<cluster>-ca` (normally created by KCP); generated here when missing. */
  private async lookupOrGenerateCA(cluster: Cluster): Promise<{ certPem: string; keyPem: string }> {
    const ref = { kind: 'Secret', namespace: cluster.metadata.namespace, name: `${cluster.metadata.name}-ca` };
    // A CA Secret with tls.crt counts even without tls.key (the key is then empty): a worker join's bootstrap data carries only the certificate (init and control-plane joins also carry the key).
    const fromSecret = (s: Secret | undefined): { certPem: string; keyPem: string } | undefined => {
      const certPem = s && secretValue(s, 'tls.crt');
      return certPem ? { certPem, keyPem: (s && secretValue(s, 'tls.key')) ?? '' } : undefined;
    };
    const existing = fromSecret(await this.ctx.mgmt.get<Secret>(ref));
    if (existing) return existing;
    const ca = await generateCA(this.ctx.rng, this.ctx.clock.now(), 'kubernetes');
    const secret: Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: ref.name, namespace: ref.namespace, labels: { [LABEL_CLUSTER_NAME]: cluster.metadata.name }, ownerReferences: [ownerRef(cluster, false)] },
      type: SECRET_TYPE_CLUSTER,
      data: { 'tls.crt': b64(ca.certPem), 'tls.key': b64(ca.keyPem) },
    };
    try {
      await this.ctx.mgmt.create(secret);
      this.ctx.events.record({ source: 'capi', type: 'bootstrap.ca-generated', message: `generated cluster CA secret ${ref.namespace}/${ref.name}`, data: { cluster: cluster.metadata.name, secret: ref.name } });
      return { certPem: ca.certPem, keyPem: ca.keyPem };
    } catch (e) {
      if (!(e instanceof KubeApiError && e.reason === 'AlreadyExists')) throw e;
      return fromSecret(await this.ctx.mgmt.get<Secret>(ref)) ?? { certPem: '', keyPem: '' };
    }
  }

  /** A kubeadm bootstrap token, stored in the workload cluster as kubeadm expects (bootstrap-token-<id>). */
  private async createBootstrapToken(cluster: Cluster): Promise<string> {
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
    const id = this.ctx.rng.string(6, alphabet);
    const secret = this.ctx.rng.string(16, alphabet);
    const wl = this.ctx.workloads.client(cluster.metadata.namespace ?? 'default', cluster.metadata.name);
    await wl.create<Secret>({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
      type: 'bootstrap.kubernetes.io/token',
      data: {
        'token-id': b64(id),
        'token-secret': b64(secret),
        expiration: b64(rfc3339(this.ctx.clock.now() + BOOTSTRAP_TOKEN_TTL_MS)),
        'usage-bootstrap-authentication': b64('true'),
        'usage-bootstrap-signing': b64('true'),
        'auth-extra-groups': b64('system:bootstrappers:kubeadm:default-node-token'),
      },
    });
    return `${id}.${secret}`;
  }

  private async storeBootstrapData(cfg: KubeadmConfig, cluster: Cluster, userData: string): Promise<void> {
    const secret: Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: cfg.metadata.name,
        namespace: cfg.metadata.namespace,
        labels: { [LABEL_CLUSTER_NAME]: cluster.metadata.name },
        ownerReferences: [ownerRef({ ...cfg, apiVersion: cfg.apiVersion || BOOTSTRAP_VERSION } as KubeObject)],
      },
      type: SECRET_TYPE_CLUSTER,
      data: { value: b64(userData), format: b64(cfg.spec.format ?? 'cloud-config') },
    };
    try {
      await this.ctx.mgmt.create(secret);
    } catch (e) {
      if (!(e instanceof KubeApiError && e.reason === 'AlreadyExists')) throw e;
      const cur = await this.ctx.mgmt.get<Secret>({ kind: 'Secret', namespace: cfg.metadata.namespace, name: cfg.metadata.name });
      if (cur) await this.ctx.mgmt.update<Secret>({ ...cur, type: secret.type, data: secret.data });
    }
  }
}

export function setupKubeadmBootstrapController(ctx: ControllerContext): KubeadmConfigReconciler {
  const r = new KubeadmConfigReconciler(ctx);
  ctx.manager.register(r);
  /** cluster key -> config keys, kept from watch events so Cluster changes can fan out synchronously. */
  const byCluster = new Map<string, Set<string>>();
  ctx.mgmt.watch<KubeadmConfig>('KubeadmConfig', (e) => {
    const k = keyFor(e.object);
    const cn = e.object.metadata.labels?.[LABEL_CLUSTER_NAME];
    if (cn) {
      const ck = `${e.object.metadata.namespace ?? 'default'}/${cn}`;
      const set = byCluster.get(ck) ?? new Set<string>();
      byCluster.set(ck, set);
      if (e.type === 'DELETED') set.delete(k);
      else set.add(k);
    }
    if (e.type !== 'DELETED') ctx.manager.enqueue(KUBEADMCONFIG_CONTROLLER, k);
  }, { shared: true });
  ctx.mgmt.watch<Machine>('Machine', (e) => {
    const ref = e.object.spec?.bootstrap?.configRef;
    if (ref?.kind === 'KubeadmConfig') ctx.manager.enqueue(KUBEADMCONFIG_CONTROLLER, `${ref.namespace ?? e.object.metadata.namespace ?? 'default'}/${ref.name}`);
  }, { shared: true });
  ctx.mgmt.watch<Cluster>('Cluster', (e) => {
    for (const k of [...(byCluster.get(keyFor(e.object)) ?? [])].sort()) ctx.manager.enqueue(KUBEADMCONFIG_CONTROLLER, k);
  }, { shared: true });
  return r;
}
