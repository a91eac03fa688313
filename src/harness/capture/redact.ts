/**
 * What never enters a bundle (issue 35): credentials (AK/SK, passwords,
 * tokens), Secret data, private keys, bootstrap tokens. Certificates' public
 * parts may stay (a CA's tls.crt, the kubelet certificates in user data).
 * Every cut is listed in the bundle's `redactions`, so a reader knows what
 * is missing and why, and the replay knows what to make anew (replay.ts).
 */
import type { KubeObject } from '../../core/kube/types.js';
import type { Redaction } from './bundle.js';

/** The placeholder a cut value is replaced by (the replay recognises it). */
export const REDACTED = '<redacted by hcs-testbed capture>';

const PEM_PRIVATE_KEY = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----/g;
/** kubeadm bootstrap tokens: [a-z0-9]{6}.[a-z0-9]{16} (https://kubernetes.io/docs/reference/access-authn-authz/bootstrap-tokens/#token-format). */
const BOOTSTRAP_TOKEN = /\b[a-z0-9]{6}\.[a-z0-9]{16}\b/g;
const PEM_CERT = /^\s*(-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\s*)+$/;
/** Annotations that copy an object's whole content (a Secret's data with it). */
const COPYING_ANNOTATIONS = ['kubectl.kubernetes.io/last-applied-configuration'];

export class Redactor {
  readonly redactions: Redaction[] = [];
  private readonly secrets: string[];

  /** `secrets`: literal values that must not appear anywhere (the AK, the SK, passwords, tokens in use). */
  constructor(secrets: readonly (string | undefined)[] = []) {
    // Longest first, so a secret containing another is cut whole; short strings would cut ordinary text.
    this.secrets = [...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length >= 8))].sort((a, b) => b.length - a.length);
  }

  note(what: string, why: string): void {
    this.redactions.push({ what, why });
  }

  /** A Kubernetes object as it may enter the bundle: Secrets keep metadata and public certificates only; managedFields and copying annotations dropped. */
  object(o: KubeObject): KubeObject {
    const c = structuredClone(o) as KubeObject & { data?: Record<string, string>; stringData?: Record<string, string> };
    const meta = c.metadata as KubeObject['metadata'] & { managedFields?: unknown };
    delete meta.managedFields;
    const where = `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
    for (const a of COPYING_ANNOTATIONS) {
      if (meta.annotations?.[a] !== undefined) {
        delete meta.annotations[a];
        if (o.kind === 'Secret') this.note(`${where} annotation ${a}`, 'copies the Secret\'s data');
      }
    }
    if (o.kind !== 'Secret') return this.strings(c, where) as KubeObject;
    const kept: Record<string, string> = {};
    for (const [k, v] of Object.entries(c.data ?? {})) {
      const text = Buffer.from(v, 'base64').toString('utf8');
      if (PEM_CERT.test(text)) kept[k] = v;
      else this.note(`${where} data[${k}]`, k.endsWith('.key') ? 'a private key' : 'Secret data (credentials, kubeconfigs, bootstrap data): never in a bundle; certificates\' public parts stay');
    }
    for (const k of Object.keys(c.stringData ?? {})) this.note(`${where} stringData[${k}]`, 'Secret data');
    delete c.stringData;
    if (Object.keys(kept).length) c.data = kept;
    else delete c.data;
    return c;
  }

  /** Cloud-init user data (decoded): private keys and bootstrap tokens cut, certificates kept. */
  userData(text: string, where: string): string {
    let out = text.replace(PEM_PRIVATE_KEY, () => {
      this.note(`${where} user data: a private key`, 'private keys never enter a bundle (the replay issues new ones)');
      return REDACTED;
    });
    out = out.replace(BOOTSTRAP_TOKEN, () => {
      this.note(`${where} user data: a kubeadm bootstrap token`, 'a credential for joining the cluster');
      return REDACTED;
    });
    return this.text(out, where);
  }

  /** Any text: the literal credentials and private keys cut. */
  text(s: string, where: string): string {
    let out = s;
    if (out.includes('PRIVATE KEY-----')) {
      out = out.replace(PEM_PRIVATE_KEY, () => {
        this.note(`${where}: a private key`, 'private keys never enter a bundle');
        return REDACTED;
      });
    }
    for (const secret of this.secrets) {
      if (!out.includes(secret)) continue;
      out = out.split(secret).join(REDACTED);
      this.note(`${where}: a credential value`, 'the AK/SK or another credential given to capture');
    }
    return out;
  }

  /** Every string in a JSON value passed through `text`. */
  strings<T>(v: T, where: string): T {
    if (typeof v === 'string') return this.text(v, where) as T;
    if (Array.isArray(v)) return v.map((x) => this.strings(x, where)) as T;
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[this.text(k, where)] = this.strings(x, where);
      return out as T;
    }
    return v;
  }
}
