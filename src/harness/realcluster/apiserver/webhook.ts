/**
 * The testbed's admission rules (src/admission: the ADMISSION table the
 * embedded store installs) served to a real kube-apiserver as admission
 * webhooks, the way Cluster API and its providers enforce defaulting and
 * validation: an HTTPS server (a fresh CA and serving certificate from
 * src/core/pki) answering AdmissionReview v1 at
 *
 *   /validate  validators of the table: `allowed: false` with a 422 Invalid
 *              Status whose causes are `{ field, message: '<RULE>: <message>' }`
 *   /mutate    defaulters of the table: a base64 JSONPatch (patchType JSONPatch)
 *
 * and the ValidatingWebhookConfiguration / MutatingWebhookConfiguration that
 * point the apiserver at it (installWebhookConfigurations).
 *
 * What the apiserver passes back to the client from a denial: the webhook's
 * Status as it is (code 422, reason Invalid, details.causes kept; a code
 * below 400 would become 400), its message prefixed with `admission webhook
 * "<webhook>" denied the request: ` (k8s.io/apiserver v1.33
 * pkg/admission/plugin/webhook/errors/statuserror.go, ToStatusErr; observed
 * on v1.33.13, test/realcluster/crds.test.ts. Later releases also prefix
 * `<resource>.<group> "<name>" is forbidden: ` and keep the rest). So
 * statusToError (src/core/kube/client-node.ts) recovers the rule ID and field of
 * each cause unchanged, as it does for the facade's Status.
 */
import { randomInt } from 'node:crypto';
import { isIP } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import Fastify, { type FastifyInstance } from 'fastify';
import { ADMISSION, admissionFor } from '../../../world/admission.js';
import { SeededRng } from '../../../core/rng.js';
import { kubeRequest } from '../../../core/kube/client-node.js';
import { KubeApiError, type FieldCause } from '../../../core/kube/errors.js';
import { jsonClone, jsonEqual } from '../../../core/kube/patch.js';
import { resourceForKind } from '../../../core/kube/resources.js';
import type { KubeObject } from '../../../core/kube/types.js';
import { generateCA, issueCertificate } from '../../../core/pki/index.js';

// ---- AdmissionReview v1 (k8s.io/api/admission/v1/types.go) -----------------

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource?: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  object?: KubeObject | null;
  oldObject?: KubeObject | null;
  dryRun?: boolean;
}

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface AdmissionStatus {
  status: 'Failure';
  code: number;
  reason: string;
  message: string;
  details?: { name?: string; group?: string; kind?: string; causes?: StatusCause[] };
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  patch?: string;
  patchType?: 'JSONPatch';
}

export interface AdmissionReview {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

export interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace';
  path: string;
  value?: unknown;
}

// ---- handlers ----------------------------------------------------------------

/** The StatusCause reason of a FieldCause, from its message's error type (as the facade words it). */
function causeReason(message: string): string {
  if (/^Required value/.test(message)) return 'FieldValueRequired';
  if (/^Forbidden/.test(message)) return 'FieldValueForbidden';
  if (/^Unsupported value/.test(message)) return 'FieldValueNotSupported';
  if (/^Duplicate/.test(message)) return 'FieldValueDuplicate';
  return 'FieldValueInvalid';
}

/** A 422 Invalid Status as apierrors.NewInvalid words it, each cause's message led by its SPEC rule ID. */
export function invalidStatus(kind: string, name: string, causes: FieldCause[]): AdmissionStatus {
  const group = resourceForKind(kind).group;
  const e = KubeApiError.invalid(group ? `${kind}.${group}` : kind, name, causes);
  return {
    status: 'Failure',
    code: 422,
    reason: 'Invalid',
    message: e.message,
    details: {
      name,
      group,
      kind,
      causes: causes.map((c) => ({ reason: causeReason(c.message), message: c.rule ? `${c.rule}: ${c.message}` : c.message, field: c.field })),
    },
  };
}

function internalError(message: string): AdmissionStatus {
  return { status: 'Failure', code: 500, reason: 'InternalError', message };
}

/** The table entry for a request, or undefined when the request is not one the rules apply to (allowed as is). */
function applicable(req: AdmissionRequest): ReturnType<typeof admissionFor> {
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return undefined; // DELETE, CONNECT: allowed
  if (req.subResource) return undefined; // status writes are not admitted (as on the embedded store)
  const a = admissionFor(req.kind.kind);
  if (!a || resourceForKind(a.kind).group !== req.kind.group || !req.object) return undefined;
  return a;
}

/** /validate: every validator of the kind; a denial names each cause's field and rule. */
export function validateReview(req: AdmissionRequest): AdmissionResponse {
  const a = applicable(req);
  if (!a) return { uid: req.uid, allowed: true };
  const obj = req.object!;
  const op = req.operation as 'CREATE' | 'UPDATE';
  const old = op === 'UPDATE' ? (req.oldObject ?? undefined) : undefined;
  let causes: FieldCause[];
  try {
    causes = a.validators.flatMap((v) => v(op, obj, old));
  } catch (e) {
    return { uid: req.uid, allowed: false, status: internalError(`validating ${a.kind}: ${(e as Error).message}`) };
  }
  if (causes.length === 0) return { uid: req.uid, allowed: true };
  return { uid: req.uid, allowed: false, status: invalidStatus(a.kind, obj.metadata?.name ?? req.name ?? '', causes) };
}

/** /mutate: every defaulter of the kind, on a copy; the difference as a JSONPatch. */
export function mutateReview(req: AdmissionRequest): AdmissionResponse {
  const a = applicable(req);
  if (!a || a.defaulters.length === 0) return { uid: req.uid, allowed: true };
  const obj = req.object!;
  const next = jsonClone(obj);
  try {
    for (const d of a.defaulters) d(next);
  } catch (e) {
    // A refusal of the decode (src/world/webhook-decode.ts) keeps its code; the apiserver prefixes the webhook's name itself.
    if (e instanceof KubeApiError) return { uid: req.uid, allowed: false, status: { status: 'Failure', code: e.code, reason: e.reason, message: e.message.replace(/^admission webhook "[^"]*" denied the request: /, '') } };
    return { uid: req.uid, allowed: false, status: internalError(`defaulting ${a.kind}: ${(e as Error).message}`) };
  }
  const ops = jsonPatchDiff(obj, jsonClone(next)); // the clone drops keys set to undefined
  if (ops.length === 0) return { uid: req.uid, allowed: true };
  return { uid: req.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') };
}

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const pointer = (k: string): string => k.replace(/~/g, '~0').replace(/\//g, '~1');

/** RFC 6902 operations turning `from` into `to` (objects key by key; a changed array or scalar is replaced). */
export function jsonPatchDiff(from: unknown, to: unknown, path = ''): JsonPatchOp[] {
  if (jsonEqual(from, to)) return [];
  if (!isPlain(from) || !isPlain(to)) return [{ op: 'replace', path, value: to }];
  const ops: JsonPatchOp[] = [];
  for (const k of Object.keys(from)) if (!Object.hasOwn(to, k)) ops.push({ op: 'remove', path: `${path}/${pointer(k)}` });
  for (const [k, v] of Object.entries(to)) {
    if (!Object.hasOwn(from, k)) ops.push({ op: 'add', path: `${path}/${pointer(k)}`, value: v });
    else ops.push(...jsonPatchDiff(from[k], v, `${path}/${pointer(k)}`));
  }
  return ops;
}

function isReview(body: unknown): body is AdmissionReview & { request: AdmissionRequest } {
  if (!isPlain(body) || body.kind !== 'AdmissionReview' || body.apiVersion !== 'admission.k8s.io/v1') return false;
  const r = body.request;
  return isPlain(r) && typeof r.uid === 'string' && isPlain(r.kind) && typeof r.operation === 'string';
}

// ---- server --------------------------------------------------------------------

export interface AdmissionWebhookOptions {
  /** The address the apiserver reaches the webhook at, an IP or a DNS name (default 127.0.0.1); in the serving certificate's SAN. */
  host?: string;
  /** Port (default 0: a free one). */
  port?: number;
  /** Listen address (default: `host` when it is an IP, 0.0.0.0 otherwise). */
  listen?: string;
}

export interface AdmissionWebhook {
  /** https://host:port (the handlers are at /validate and /mutate). */
  url: string;
  /** The CA of the serving certificate, base64 PEM (a webhook configuration's clientConfig.caBundle). */
  caBundle: string;
  /** The fastify app (for inject in tests). */
  app: FastifyInstance;
  /** Reviews answered so far, per path. */
  served: { validate: number; mutate: number };
  close(): Promise<void>;
}

/** Start the HTTPS admission webhook; resolves once it listens. */
export async function startAdmissionWebhook(opts: AdmissionWebhookOptions = {}): Promise<AdmissionWebhook> {
  const host = opts.host ?? '127.0.0.1';
  const ip = isIP(host) !== 0;
  const now = Date.now();
  const rng = new SeededRng(randomInt(2 ** 31));
  const ca = await generateCA(rng, now, 'hcs-testbed-webhook-ca');
  const serving = await issueCertificate(
    ca,
    { commonName: 'hcs-testbed-webhook', dnsNames: [...(ip ? [] : [host]), 'localhost'], ips: [...(ip ? [host] : []), ...(host === '127.0.0.1' ? [] : ['127.0.0.1'])] },
    rng,
    now,
  );
  // Admission reviews carry the object and the old object: allow the apiserver's 3 MiB request limit twice over.
  const app = Fastify({ logger: false, https: { key: serving.keyPem, cert: serving.certPem }, bodyLimit: 8 * 1024 * 1024, forceCloseConnections: true });
  const served = { validate: 0, mutate: 0 };
  for (const [path, handle] of [['validate', validateReview], ['mutate', mutateReview]] as const) {
    app.post(`/${path}`, async (request, reply) => {
      if (!isReview(request.body)) return reply.code(400).send({ message: 'expected an admission.k8s.io/v1 AdmissionReview with a request' });
      served[path]++;
      const review: AdmissionReview = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: handle(request.body.request) };
      return review;
    });
  }
  const address = await app.listen({ host: opts.listen ?? (ip ? host : '0.0.0.0'), port: opts.port ?? 0 });
  const port = Number(new URL(address).port);
  const url = `https://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  // The https server's type is narrower than FastifyInstance's default (http) one; only inject/close are used through it.
  return { url, caBundle: Buffer.from(ca.certPem).toString('base64'), app: app as unknown as FastifyInstance, served, close: () => app.close() };
}

// ---- webhook configurations ------------------------------------------------------

export interface WebhookConfigurationOptions {
  /** metadata.name of both configurations (default hcs-testbed). */
  name?: string;
  /** How long to wait for the apiserver to call the webhooks (default 30 s). */
  timeoutMs?: number;
  /** Namespace of the dry-run probes (default `default`, which every apiserver creates). */
  probeNamespace?: string;
  /** Per-call timeout the apiserver applies (default 5 s). */
  timeoutSeconds?: number;
}

const REG = '/apis/admissionregistration.k8s.io/v1';
export const VALIDATING_WEBHOOK = 'validation.hcs-testbed.cluster.x-k8s.io';
export const MUTATING_WEBHOOK = 'default.hcs-testbed.cluster.x-k8s.io';

interface Rule {
  apiGroups: string[];
  apiVersions: string[];
  operations: ('CREATE' | 'UPDATE')[];
  resources: string[];
  scope: 'Namespaced' | 'Cluster';
}

/** One rule per API group/version, for the kinds the table has validators (or defaulters) for. */
export function webhookRules(which: 'validators' | 'defaulters'): Rule[] {
  const rules = new Map<string, Rule>();
  for (const a of ADMISSION) {
    if (a[which].length === 0) continue;
    const info = resourceForKind(a.kind);
    const key = `${info.group}/${info.version}/${info.namespaced}`;
    let r = rules.get(key);
    if (!r) rules.set(key, (r = { apiGroups: [info.group], apiVersions: [info.version], operations: ['CREATE', 'UPDATE'], resources: [], scope: info.namespaced ? 'Namespaced' : 'Cluster' }));
    r.resources.push(info.plural);
  }
  return [...rules.values()];
}

/** The two configurations for a webhook, as installWebhookConfigurations writes them. */
export function webhookConfigurations(webhook: Pick<AdmissionWebhook, 'url' | 'caBundle'>, opts: WebhookConfigurationOptions = {}): { validating: KubeObject; mutating: KubeObject } {
  const name = opts.name ?? 'hcs-testbed';
  const common = {
    sideEffects: 'None', // also what lets the apiserver call it for dry-run requests
    admissionReviewVersions: ['v1'],
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    timeoutSeconds: opts.timeoutSeconds ?? 5,
  };
  return {
    validating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name },
      webhooks: [{ name: VALIDATING_WEBHOOK, clientConfig: { url: `${webhook.url}/validate`, caBundle: webhook.caBundle }, rules: webhookRules('validators'), ...common }],
    } as KubeObject,
    mutating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name },
      webhooks: [{ name: MUTATING_WEBHOOK, clientConfig: { url: `${webhook.url}/mutate`, caBundle: webhook.caBundle }, rules: webhookRules('defaulters'), reinvocationPolicy: 'Never', ...common }],
    } as KubeObject,
  };
}

async function request(kc: KubeConfig, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const server = kc.getCurrentCluster()?.server.replace(/\/+$/, '');
  if (!server) throw new Error('kubeconfig has no current cluster');
  return kubeRequest(kc, method, new URL(server + path), body);
}

const messageOf = (body: unknown): string => (isPlain(body) && typeof body.message === 'string' ? body.message : JSON.stringify(body));

async function createOrReplace(kc: KubeConfig, collection: string, obj: KubeObject): Promise<void> {
  const path = `${REG}/${collection}`;
  const cur = await request(kc, 'GET', `${path}/${obj.metadata.name}`);
  const r =
    cur.status === 404
      ? await request(kc, 'POST', path, obj)
      : await request(kc, 'PUT', `${path}/${obj.metadata.name}`, { ...obj, metadata: { ...obj.metadata, resourceVersion: (cur.body as KubeObject).metadata.resourceVersion } });
  if (r.status >= 300) throw new Error(`${obj.kind} ${obj.metadata.name} rejected (${r.status}): ${messageOf(r.body)}`);
}

/**
 * Create or replace the ValidatingWebhookConfiguration and the
 * MutatingWebhookConfiguration for `webhook`, then wait until the apiserver
 * calls both: it loads configurations from an informer, asynchronously
 * (k8s.io/apiserver pkg/admission/configuration), so a write right after the
 * install could still pass unchecked. Probes are dry-run creates: a pool with
 * a duplicate hostname (POOL-1, which only the webhook checks) must be denied
 * by the webhook, and a MachineDeployment without a strategy must come back
 * defaulted (MD-1 defaulting).
 */
export async function installWebhookConfigurations(kc: KubeConfig, webhook: Pick<AdmissionWebhook, 'url' | 'caBundle'>, opts: WebhookConfigurationOptions = {}): Promise<void> {
  const { validating, mutating } = webhookConfigurations(webhook, opts);
  await createOrReplace(kc, 'mutatingwebhookconfigurations', mutating);
  await createOrReplace(kc, 'validatingwebhookconfigurations', validating);
  const ns = opts.probeNamespace ?? 'default';
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  const entry = { hostname: 'probe', networks: [{ subnetName: 'probe', ipAddress: '192.0.2.1' }] };
  const pool = { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'HCSMachineConfigPool', metadata: { name: 'hcs-testbed-webhook-probe', namespace: ns }, spec: { configs: [entry, entry] } };
  const md = {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'MachineDeployment',
    metadata: { name: 'hcs-testbed-webhook-probe', namespace: ns },
    // selector: required by upstream's CRD (the --capi upstream mode installs it), optional in the testbed's.
    spec: { clusterName: 'probe', replicas: 0, selector: { matchLabels: {} }, template: { spec: { clusterName: 'probe', bootstrap: { dataSecretName: 'probe' }, infrastructureRef: { name: 'probe' } } } },
  };
  let validated = false;
  let mutated = false;
  let last = '';
  for (;;) {
    if (!validated) {
      const r = await request(kc, 'POST', `/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/${ns}/hcsmachineconfigpools?dryRun=All`, pool);
      const m = messageOf(r.body);
      validated = r.status === 422 && m.includes(`admission webhook "${VALIDATING_WEBHOOK}" denied the request`);
      if (!validated) last = `validating probe: ${r.status} ${r.status < 300 ? 'accepted (webhook not called yet)' : m}`;
    }
    if (!mutated) {
      const r = await request(kc, 'POST', `/apis/cluster.x-k8s.io/v1beta1/namespaces/${ns}/machinedeployments?dryRun=All`, md);
      const strategy = isPlain(r.body) && isPlain(r.body.spec) ? r.body.spec.strategy : undefined;
      mutated = r.status < 300 && isPlain(strategy) && isPlain(strategy.rollingUpdate) && strategy.rollingUpdate.maxSurge === 1;
      if (!mutated) last = `mutating probe: ${r.status} ${r.status < 300 ? 'not defaulted (webhook not called yet)' : messageOf(r.body)}`;
    }
    if (validated && mutated) return;
    if (Date.now() > deadline) throw new Error(`admission webhook at ${webhook.url} not in effect after ${opts.timeoutMs ?? 30_000} ms (is it reachable from the apiserver?): ${last}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

/** Delete both configurations (ignoring absent ones), e.g. before the webhook stops while the cluster keeps running. */
export async function removeWebhookConfigurations(kc: KubeConfig, opts: Pick<WebhookConfigurationOptions, 'name'> = {}): Promise<void> {
  const name = opts.name ?? 'hcs-testbed';
  for (const c of ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations']) {
    const r = await request(kc, 'DELETE', `${REG}/${c}/${name}`);
    if (r.status >= 300 && r.status !== 404) throw new Error(`deleting ${c}/${name}: ${r.status} ${messageOf(r.body)}`);
  }
}
