/**
 * `hcs-testbed run --provider in-cluster`: the HCS provider is
 * `deployment/hcs-controller-manager` in the management cluster (`hcs-testbed
 * kind up --managers in-cluster`, src/harness/realcluster/kind/provider-incluster.ts). The
 * run:
 *
 * - serves each scenario's mock-hcs (the CloudFront of `--provider
 *   external`) at the address and with the certificate `kind up` configured
 *   the provider for: Secret `cpaas-system/hcs-testbed-cloud-serving` (url,
 *   tls.crt, tls.key, ca.crt), i.e. this machine's address on the kind
 *   network, which the provider's pod reaches and whose CA it trusts;
 * - waits (bounded) until the Deployment is Available;
 * - follows the provider pod's log (`pods/log?follow=true`, what `kubectl
 *   logs -f deployment/hcs-controller-manager` reads) into the provider log
 *   file, from which the run takes the provider's decisions as events and
 *   the controllerLog checks read (as for `--provider external`,
 *   src/product/provider/process.ts followProviderLog). A new pod (restart,
 *   rollout) is followed from its first line; a dropped stream of the same
 *   pod from where it dropped.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { Log, type KubeConfig } from '@kubernetes/client-node';
import { InputError } from '../../../core/errors.js';
import { kubeRequest } from '../../../core/kube/client-node.js';
import { CLOUD_SERVING_SECRET, PROVIDER_DEPLOYMENT_NAME, PROVIDER_NAMESPACE } from './provider-incluster.js';
import { CloudFront } from '../external.js';

const unb64 = (s: string | undefined): string => Buffer.from(s ?? '', 'base64').toString('utf8');

function serverOf(kc: KubeConfig): string {
  return kc.getCurrentCluster()!.server.replace(/\/+$/, '');
}

/** The endpoint `kind up --managers in-cluster` configured the provider for, served by a CloudFront with its certificate. */
export async function startInClusterCloudFront(kc: KubeConfig): Promise<CloudFront> {
  const r = await kubeRequest(kc, 'GET', new URL(`${serverOf(kc)}/api/v1/namespaces/${PROVIDER_NAMESPACE}/secrets/${CLOUD_SERVING_SECRET}`));
  if (r.status === 404) throw new InputError(`--provider in-cluster: no Secret ${PROVIDER_NAMESPACE}/${CLOUD_SERVING_SECRET} in the cluster: install the provider with \`hcs-testbed kind up --managers in-cluster\``, 'provider');
  if (r.status >= 300) throw new Error(`--provider in-cluster: reading Secret ${PROVIDER_NAMESPACE}/${CLOUD_SERVING_SECRET}: HTTP ${r.status}`);
  const data = (r.body as { data?: Record<string, string> }).data ?? {};
  const url = unb64(data.url);
  const certPem = unb64(data['tls.crt']);
  const keyPem = unb64(data['tls.key']);
  const caPem = unb64(data['ca.crt']);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new InputError(`--provider in-cluster: Secret ${PROVIDER_NAMESPACE}/${CLOUD_SERVING_SECRET}: key url is not a URL ("${url}")`, 'provider');
  }
  if (!certPem.includes('BEGIN CERTIFICATE') || !keyPem.includes('PRIVATE KEY') || !caPem.includes('BEGIN CERTIFICATE')) {
    throw new InputError(`--provider in-cluster: Secret ${PROVIDER_NAMESPACE}/${CLOUD_SERVING_SECRET}: tls.crt, tls.key and ca.crt are required`, 'provider');
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  try {
    return await CloudFront.start({ host, port: Number(u.port || 443), tls: { certPem, keyPem, caPem } });
  } catch (e) {
    throw new InputError(`--provider in-cluster: cannot serve the HCS endpoint at ${url} (${(e as Error).message}); it must be an address of this machine (kind: the gateway of its Docker network) with the port free`, 'provider');
  }
}

interface DeploymentStatus {
  status?: { readyReplicas?: number; conditions?: { type: string; status: string; message?: string }[] };
  spec?: { selector?: { matchLabels?: Record<string, string> } };
}

/** Wait until deployment/hcs-controller-manager is Available (bounded); returns its pod selector. */
export async function waitProviderAvailable(kc: KubeConfig, timeoutMs: number): Promise<Record<string, string>> {
  const url = new URL(`${serverOf(kc)}/apis/apps/v1/namespaces/${PROVIDER_NAMESPACE}/deployments/${PROVIDER_DEPLOYMENT_NAME}`);
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const r = await kubeRequest(kc, 'GET', url);
    if (r.status === 404) throw new InputError(`--provider in-cluster: no deployment/${PROVIDER_DEPLOYMENT_NAME} in ${PROVIDER_NAMESPACE}: install it with \`hcs-testbed kind up --managers in-cluster\``, 'provider');
    const d = r.body as DeploymentStatus;
    const avail = d.status?.conditions?.find((c) => c.type === 'Available');
    if (avail?.status === 'True' && (d.status?.readyReplicas ?? 0) >= 1) return d.spec?.selector?.matchLabels ?? {};
    last = avail?.message ?? `HTTP ${r.status}, readyReplicas ${d.status?.readyReplicas ?? 0}`;
    if (Date.now() > deadline) throw new InputError(`--provider in-cluster: deployment/${PROVIDER_DEPLOYMENT_NAME} not Available within ${timeoutMs / 1000} s (${last})`, 'provider-wait');
    await new Promise((res) => setTimeout(res, 500));
  }
}

export interface LogFollower {
  /** Lines appended so far. */
  lines(): number;
  stop(): Promise<void>;
}

/**
 * Append the provider pod's log to `file` as it is written (`follow=true`), until stopped. Only lines written from
 * now on: the newest Running pod is followed with `sinceTime` = now; a later pod from its start.
 */
export async function followProviderPodLog(kc: KubeConfig, selector: Record<string, string>, file: string, warn: (msg: string) => void = () => {}): Promise<LogFollower> {
  const fd = openSync(file, 'a');
  const log = new Log(kc);
  let stopped = false;
  let count = 0;
  let current: AbortController | undefined;
  let wake: (() => void) | undefined;
  let followed = '';
  let since = new Date().toISOString();
  const sel = Object.entries(selector).map(([k, v]) => `${k}=${v}`).join(',');
  const podsUrl = new URL(`${serverOf(kc)}/api/v1/namespaces/${PROVIDER_NAMESPACE}/pods?labelSelector=${encodeURIComponent(sel)}`);
  const newestRunning = async (): Promise<string | undefined> => {
    const r = await kubeRequest(kc, 'GET', podsUrl);
    const items = ((r.body as { items?: { metadata: { name: string; creationTimestamp?: string; deletionTimestamp?: string }; status?: { phase?: string } }[] }).items ?? []).filter((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp);
    items.sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
    return items.at(-1)?.metadata.name;
  };
  const loop = (async () => {
    while (!stopped) {
      try {
        const pod = await newestRunning();
        if (pod) {
          const opts = pod === followed ? { follow: true, sinceTime: since } : followed ? { follow: true } : { follow: true, sinceTime: since };
          followed = pod;
          const out = new PassThrough();
          let rest = '';
          out.on('data', (c: Buffer) => {
            const text = rest + c.toString('utf8');
            const parts = text.split('\n');
            rest = parts.pop() ?? '';
            for (const l of parts) {
              writeSync(fd, `${l}\n`);
              count++;
            }
          });
          const ended = new Promise<void>((res) => {
            out.on('finish', () => res());
            out.on('close', () => res());
            out.on('error', () => res());
            wake = res;
          });
          current = await log.log(PROVIDER_NAMESPACE, pod, 'manager', out, opts);
          await ended;
          if (rest) {
            writeSync(fd, `${rest}\n`);
            count++;
          }
          since = new Date().toISOString();
        }
      } catch (e) {
        if (!stopped) warn(`provider log: ${(e as Error).message}`);
      }
      if (!stopped) await new Promise((res) => setTimeout(res, 1000));
    }
  })();
  return {
    lines: () => count,
    stop: async () => {
      stopped = true;
      current?.abort();
      wake?.();
      await loop;
      closeSync(fd);
    },
  };
}
