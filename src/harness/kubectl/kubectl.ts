import { stringify } from 'yaml';
import type { Clock } from '../../core/clock.js';
import { formatDuration } from '../../core/clock.js';
import { errorMessage } from '../../core/errors.js';
import type { KubeClient, PatchType } from '../../core/kube/client.js';
import { KubeApiError } from '../../core/kube/errors.js';
import { resourceForName, type ResourceInfo } from '../../core/kube/resources.js';
import type { KubeObject } from '../../core/kube/types.js';
import type { WorkloadClusters } from '../../core/runtime/context.js';
import { applyObject, loadManifestPath } from '../manifests/index.js';
import { tokenize } from './tokenize.js';
import { toTable } from '../../world/facade/tables.js';

/**
 * A built-in interpreter for the kubectl subset the procedure documents use
 * (OPS-1): get (table, -o yaml|json|jsonpath, -l, -w prints the current
 * state), patch --type json|merge, apply -f, annotate --overwrite, scale,
 * delete, logs deployment/<name>. Nodes and AppReleases live in the workload
 * cluster (select it with --context <cluster> when there are several).
 */
export interface KubectlEnv {
  mgmt: KubeClient;
  workloads: WorkloadClusters;
  clock: Clock;
  logs(deployment: string): string | undefined;
  /** Directory relative paths (apply -f) are resolved against. */
  cwd: string;
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

interface Flags {
  namespace?: string;
  selector?: string;
  output?: string;
  type?: string;
  patch?: string;
  filenames: string[];
  overwrite: boolean;
  watch: boolean;
  context?: string;
  replicas?: number;
  positional: string[];
}

const WORKLOAD_KINDS = new Set(['Node', 'AppRelease']);

function parseFlags(args: string[]): Flags {
  const f: Flags = { filenames: [], overwrite: false, watch: false, positional: [] };
  const take = (i: number, name: string): string => {
    const v = args[i + 1];
    if (v === undefined) throw new Error(`flag needs an argument: ${name}`);
    return v;
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    // pflag accepts --flag=value and, for shorthands, -p=value.
    const [name, inline] =
      a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]
      : /^-[a-zA-Z]=/.test(a) ? [a.slice(0, 2), a.slice(3)]
      : [a, undefined];
    const val = (): string => {
      if (inline !== undefined) return inline;
      const v = take(i, name);
      i++;
      return v;
    };
    switch (name) {
      case '-n': case '--namespace': f.namespace = val(); break;
      case '-l': case '--selector':
        // Passed through in the apiserver's syntax (a=b, a!=b, a in (x), a, !a): the documents use the
        // existence form `-l cluster.x-k8s.io/control-plane`.
        f.selector = val();
        break;
      case '-o': case '--output': f.output = val(); break;
      case '--type': f.type = val(); break;
      case '-p': case '--patch': f.patch = val(); break;
      case '-f': case '--filename': f.filenames.push(val()); break;
      case '--overwrite': f.overwrite = inline === undefined || inline === 'true'; break;
      case '-w': case '--watch': f.watch = true; break;
      case '--context': f.context = val(); break;
      case '--replicas': f.replicas = Number(val()); break;
      default:
        if (a.startsWith('-o') && a.length > 2) f.output = a.slice(2);
        else if (a.startsWith('-') && a !== '-') throw new Error(`unknown flag: ${a}`);
        else f.positional.push(a);
    }
  }
  return f;
}

function age(clock: Clock, o: KubeObject): string {
  const t = o.metadata.creationTimestamp ? Date.parse(o.metadata.creationTimestamp) : clock.now();
  return formatDuration(Math.max(0, clock.now() - t)).replace(/(\d+[hm])\d+s$/, '$1');
}

/**
 * `kubectl get` table: the same columns the API facade serves for server-side
 * printing (src/world/facade/tables.ts: the CRDs' printer columns, the apiserver's
 * printers for built-in kinds), laid out as kubectl prints them. `-o wide`
 * adds the columns of priority > 0.
 */
function table(kind: string, items: KubeObject[], clock: Clock, wide: boolean): string {
  if (items.length === 0) return '';
  const t = toTable(kind, items, clock.now(), { includeObject: 'None' });
  const keep = t.columnDefinitions.map((d, i) => (wide || d.priority === 0 ? i : -1)).filter((i) => i >= 0);
  const header = keep.map((i) => t.columnDefinitions[i]!.name.toUpperCase());
  const rows = t.rows.map((r) =>
    keep.map((i) => {
      const v = r.cells[i];
      return v === undefined || v === null || v === '' ? '' : String(v);
    }),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]! + 3))).join('').trimEnd()).join('\n') + '\n';
}

/** kubectl's jsonpath subset: {.a.b}, {.a[0].b}, {.a.*.b}, {"\n"} and literal text. */
export function jsonpath(template: string, obj: unknown): string {
  let out = '';
  const re = /\{([^}]*)\}/g;
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(template)) !== null) {
    out += template.slice(last, m.index);
    last = re.lastIndex;
    const expr = m[1]!.trim();
    if (/^".*"$/.test(expr)) {
      out += JSON.parse(expr) as string;
      continue;
    }
    let vals: unknown[] = [obj];
    // Segments split on unescaped dots ("cpaas\\.io/kube-ovn-version" is one key).
    for (const seg of expr.replace(/^\./, '').split(/(?<!\\)\.(?![^[]*\])/).filter(Boolean)) {
      const mm = /^([^[]*)(?:\[(\d+|\*)\])?$/.exec(seg);
      const key = (mm?.[1] ?? seg).replace(/\\\./g, '.');
      const idx = mm?.[2];
      vals = vals.flatMap((v) => {
        if (typeof v !== 'object' || v === null) return [];
        if (key === '*') return Array.isArray(v) ? v : Object.values(v);
        const next = key === '' ? v : (v as Record<string, unknown>)[key];
        if (idx === undefined) return next === undefined ? [] : [next];
        if (!Array.isArray(next)) return [];
        return idx === '*' ? next : next[Number(idx)] === undefined ? [] : [next[Number(idx)]];
      });
    }
    out += vals.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(' ');
  }
  return out + template.slice(last);
}

function resolveResource(name: string | undefined): ResourceInfo {
  if (!name) throw new Error('you must specify the type of resource to get');
  const info = resourceForName(name);
  if (!info) throw new Error(`the server doesn't have a resource type "${name}"`);
  return info;
}

function clientFor(env: KubectlEnv, kind: string, f: Flags, ns: string): KubeClient {
  if (!WORKLOAD_KINDS.has(kind)) return env.mgmt;
  const names = env.workloads.names();
  if (f.context) {
    const hit = names.find((n) => n.endsWith(`/${f.context}`)) ?? `${ns}/${f.context}`;
    const [wns, wname] = hit.split('/') as [string, string];
    return env.workloads.client(wns, wname);
  }
  if (names.length === 1) {
    const [wns, wname] = names[0]!.split('/') as [string, string];
    return env.workloads.client(wns, wname);
  }
  throw new Error(names.length === 0 ? `no workload cluster exists yet to read ${kind} from` : `several workload clusters (${names.join(', ')}): choose one with --context <cluster>`);
}

export async function runKubectl(commandLine: string | string[], env: KubectlEnv): Promise<KubectlResult> {
  let argv: string[];
  try {
    argv = Array.isArray(commandLine) ? commandLine : tokenize(commandLine);
  } catch (e) {
    return { code: 1, stdout: '', stderr: `error: ${errorMessage(e)}\n` };
  }
  if (argv[0] === 'kubectl') argv = argv.slice(1);
  try {
    const verb = argv[0];
    const f = parseFlags(argv.slice(1));
    const ns = f.namespace ?? 'default';
    switch (verb) {
      case 'get': return await cmdGet(env, f, ns);
      case 'patch': return await cmdPatch(env, f, ns);
      case 'apply': return await cmdApply(env, f, ns);
      case 'annotate': return await cmdAnnotate(env, f, ns);
      case 'scale': return await cmdScale(env, f, ns);
      case 'delete': return await cmdDelete(env, f, ns);
      case 'logs': return cmdLogs(env, f);
      case 'describe': return await cmdDescribe(env, f, ns);
      default:
        return { code: 1, stdout: '', stderr: `error: unknown or unsupported command "${verb ?? ''}" (supported: get, describe, patch, apply, annotate, scale, delete, logs)\n` };
    }
  } catch (e) {
    const msg = e instanceof KubeApiError ? `Error from server (${e.reason}): ${e.message}` : `error: ${errorMessage(e)}`;
    return { code: 1, stdout: '', stderr: msg + '\n' };
  }
}

function splitTypeName(f: Flags): { info: ResourceInfo; name?: string } {
  const [first, second] = f.positional;
  if (first?.includes('/')) {
    const [t, n] = first.split('/');
    return { info: resolveResource(t), ...(n ? { name: n } : {}) };
  }
  return { info: resolveResource(first), ...(second ? { name: second } : {}) };
}

async function cmdGet(env: KubectlEnv, f: Flags, ns: string): Promise<KubectlResult> {
  const { info, name } = splitTypeName(f);
  const client = clientFor(env, info.kind, f, ns);
  const namespace = info.namespaced ? ns : undefined;
  let items: KubeObject[];
  if (name) {
    const o = await client.get({ kind: info.kind, namespace, name });
    if (!o) throw KubeApiError.notFound(info.group ? `${info.plural}.${info.group}` : info.plural, name);
    items = [o];
  } else {
    items = await client.list(info.kind, { ...(namespace ? { namespace } : {}), ...(f.selector ? { labelSelector: f.selector } : {}) });
  }
  const single = !!name;
  const o = f.output;
  let stdout: string;
  if (!o || o === 'wide') {
    stdout = table(info.kind, items, env.clock, o === 'wide');
    if (!stdout) return { code: 0, stdout: '', stderr: `No resources found${namespace ? ` in ${namespace} namespace` : ''}.\n` };
  } else if (o === 'yaml') {
    stdout = stringify(single ? items[0] : { apiVersion: 'v1', kind: 'List', items });
  } else if (o === 'json') {
    stdout = JSON.stringify(single ? items[0] : { apiVersion: 'v1', kind: 'List', items }, null, 4) + '\n';
  } else if (o.startsWith('jsonpath=')) {
    stdout = jsonpath(o.slice('jsonpath='.length), single ? items[0] : { items });
  } else if (o === 'name') {
    stdout = items.map((i) => `${info.kind.toLowerCase()}.${info.group || ''}/${i.metadata.name}`.replace('./', '/')).join('\n') + '\n';
  } else throw new Error(`unable to match a printer suitable for the output format "${o}"`);
  return { code: 0, stdout, stderr: f.watch ? '(watch: the built-in interpreter prints the current state; use the real kubectl against the facade to stream)\n' : '' };
}

async function cmdPatch(env: KubectlEnv, f: Flags, ns: string): Promise<KubectlResult> {
  const { info, name } = splitTypeName(f);
  if (!name) throw new Error('resource name may not be empty');
  if (f.patch === undefined) throw new Error('must specify -p to patch');
  const type = (f.type ?? 'strategic') as string;
  if (type !== 'json' && type !== 'merge') {
    if (info.group) throw new Error(`strategic merge patch is not supported for custom resources (${info.kind}); use --type merge or --type json`);
  }
  let body: unknown;
  try {
    body = JSON.parse(f.patch);
  } catch (e) {
    throw new Error(`unable to parse "${f.patch}": ${errorMessage(e)}`);
  }
  const client = clientFor(env, info.kind, f, ns);
  const before = await client.get({ kind: info.kind, namespace: info.namespaced ? ns : undefined, name });
  if (!before) throw KubeApiError.notFound(info.plural, name);
  const after = await client.patch({ kind: info.kind, namespace: info.namespaced ? ns : undefined, name }, (type === 'json' ? 'json' : 'merge') as PatchType, body);
  const changed = after.metadata.resourceVersion !== before.metadata.resourceVersion;
  return { code: 0, stdout: `${info.kind.toLowerCase()}.${info.group ? info.group : ''}/${name} ${changed ? 'patched' : 'patched (no change)'}\n`.replace('./', '/'), stderr: '' };
}

async function cmdApply(env: KubectlEnv, f: Flags, _ns: string): Promise<KubectlResult> {
  if (f.filenames.length === 0) throw new Error('must specify one of -f and -k');
  let out = '';
  for (const file of f.filenames) {
    const path = file.startsWith('/') ? file : `${env.cwd}/${file}`;
    for (const m of loadManifestPath(path)) {
      const res = await applyObject(env.mgmt, m.obj, f.namespace ?? m.obj.metadata.namespace);
      const info = resolveResource(m.obj.kind);
      out += `${info.kind.toLowerCase()}${info.group ? '.' + info.group : ''}/${m.obj.metadata.name} ${res.action}\n`;
    }
  }
  return { code: 0, stdout: out, stderr: '' };
}

async function cmdAnnotate(env: KubectlEnv, f: Flags, ns: string): Promise<KubectlResult> {
  const [typeArg, ...rest] = f.positional;
  const info = resolveResource(typeArg);
  // `annotate TYPE NAME k=v…`, or `annotate TYPE -l SELECTOR k=v…` (every object the selector matches, as kubectl does).
  const bySelector = f.selector !== undefined && (rest[0] === undefined || rest[0].includes('='));
  const nameArg = bySelector ? undefined : rest[0];
  const pairs = bySelector ? rest : rest.slice(1);
  if (!nameArg && !bySelector) throw new Error('one or more resources must be specified');
  const client = clientFor(env, info.kind, f, ns);
  const namespace = info.namespaced ? ns : undefined;
  const targets: KubeObject[] = [];
  if (nameArg) {
    const cur = await client.get({ kind: info.kind, namespace, name: nameArg });
    if (!cur) throw KubeApiError.notFound(info.plural, nameArg);
    targets.push(cur);
  } else targets.push(...(await client.list(info.kind, { ...(namespace ? { namespace } : {}), labelSelector: f.selector! })));
  let out = '';
  for (const cur of targets) {
    const patch: Record<string, string | null> = {};
    for (const p of pairs) {
      if (p.endsWith('-') && !p.includes('=')) {
        patch[p.slice(0, -1)] = null;
        continue;
      }
      const eq = p.indexOf('=');
      if (eq <= 0) throw new Error(`invalid annotation "${p}": use key=value`);
      const k = p.slice(0, eq);
      const v = p.slice(eq + 1);
      if (cur.metadata.annotations?.[k] !== undefined && cur.metadata.annotations[k] !== v && !f.overwrite) {
        throw new Error(`--overwrite is false but found the following declared annotation(s): '${k}' already has a value (${cur.metadata.annotations[k]})`);
      }
      patch[k] = v;
    }
    await client.patch({ kind: info.kind, namespace, name: cur.metadata.name }, 'merge', { metadata: { annotations: patch } });
    out += `${info.kind.toLowerCase()}${info.group ? '.' + info.group : ''}/${cur.metadata.name} annotated\n`;
  }
  return { code: 0, stdout: out, stderr: '' };
}

async function cmdScale(env: KubectlEnv, f: Flags, ns: string): Promise<KubectlResult> {
  const { info, name } = splitTypeName(f);
  if (!name || f.replicas === undefined || !Number.isInteger(f.replicas) || f.replicas < 0) throw new Error('scale needs a resource name and --replicas=N (N >= 0)');
  await env.mgmt.patch({ kind: info.kind, namespace: ns, name }, 'merge', { spec: { replicas: f.replicas } });
  return { code: 0, stdout: `${info.kind.toLowerCase()}${info.group ? '.' + info.group : ''}/${name} scaled\n`, stderr: '' };
}

async function cmdDelete(env: KubectlEnv, f: Flags, ns: string): Promise<KubectlResult> {
  const { info, name } = splitTypeName(f);
  const client = clientFor(env, info.kind, f, ns);
  const namespace = info.namespaced ? ns : undefined;
  const shown = `${info.kind.toLowerCase()}${info.group ? '.' + info.group : ''}`;
  if (!name && f.selector) {
    // `kubectl delete TYPE -l SELECTOR`: every object the selector matches, one line each (none: kubectl's notice on stderr).
    const items = await client.list(info.kind, { ...(namespace ? { namespace } : {}), labelSelector: f.selector });
    for (const o of items) await client.delete({ kind: info.kind, namespace, name: o.metadata.name });
    if (items.length === 0) return { code: 0, stdout: '', stderr: `No resources found${namespace ? ` in ${namespace} namespace` : ''}.\n` };
    return { code: 0, stdout: items.map((o) => `${shown} "${o.metadata.name}" deleted\n`).join(''), stderr: '' };
  }
  if (!name) throw new Error('resource(s) were provided, but no name was specified');
  await client.delete({ kind: info.kind, namespace, name });
  return { code: 0, stdout: `${shown} "${name}" deleted\n`, stderr: '' };
}

interface EventObj extends KubeObject {
  involvedObject?: { kind?: string; name?: string; namespace?: string };
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
  source?: { component?: string };
}

function describeValue(v: unknown, indent: string): string[] {
  if (v === null || v === undefined) return [];
  if (typeof v !== 'object') return [`${indent}${String(v)}`];
  const out: string[] = [];
  if (Array.isArray(v)) {
    for (const item of v) {
      const lines = describeValue(item, indent + '  ');
      if (lines.length) out.push(`${indent}- ${lines[0]!.trimStart()}`, ...lines.slice(1));
    }
    return out;
  }
  for (const [k, val] of Object.entries(v)) {
    const key = k.charAt(0).toUpperCase() + k.slice(1);
    if (val !== null && typeof val === 'object') out.push(`${indent}${key}:`, ...describeValue(val, indent + '  '));
    else out.push(`${indent}${key}:${' '.repeat(Math.max(1, 20 - key.length - indent.length))}${String(val)}`);
  }
  return out;
}

/** `kubectl describe TYPE [NAME]`: fields, conditions and the object's Events, in kubectl's layout. */
async function cmdDescribe(env: KubectlEnv, f: Flags, ns: string): Promise<KubectlResult> {
  const { info, name } = splitTypeName(f);
  const client = clientFor(env, info.kind, f, ns);
  const namespace = info.namespaced ? ns : undefined;
  const items = name
    ? [await client.get({ kind: info.kind, namespace, name })].filter((o): o is KubeObject => !!o)
    : await client.list(info.kind, { ...(namespace ? { namespace } : {}), ...(f.selector ? { labelSelector: f.selector } : {}) });
  if (name && items.length === 0) throw KubeApiError.notFound(info.group ? `${info.plural}.${info.group}` : info.plural, name);
  const events = await env.mgmt.list<EventObj>('Event', namespace ? { namespace } : {});
  const blocks = items.map((o) => {
    const lines = [
      `Name:         ${o.metadata.name}`,
      ...(o.metadata.namespace ? [`Namespace:    ${o.metadata.namespace}`] : []),
      `Labels:       ${Object.entries(o.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`).join('\n              ') || '<none>'}`,
      `API Version:  ${o.apiVersion}`,
      `Kind:         ${o.kind}`,
      ...(o.spec !== undefined ? ['Spec:', ...describeValue(o.spec, '  ')] : []),
      ...(o.status !== undefined ? ['Status:', ...describeValue(o.status, '  ')] : []),
    ];
    const mine = events.filter((e) => e.involvedObject?.kind === o.kind && e.involvedObject.name === o.metadata.name);
    if (mine.length === 0) lines.push('Events:       <none>');
    else {
      lines.push('Events:', '  Type     Reason  Age  From  Message', '  ----     ------  ---  ----  -------');
      for (const e of mine) lines.push(`  ${(e.type ?? 'Normal').padEnd(7)}  ${e.reason ?? ''}  ${age(env.clock, e)}  ${e.source?.component ?? ''}  ${e.message ?? ''}`);
    }
    return lines.join('\n');
  });
  if (blocks.length === 0) return { code: 0, stdout: '', stderr: `No resources found${namespace ? ` in ${namespace} namespace` : ''}.\n` };
  return { code: 0, stdout: blocks.join('\n\n\n') + '\n', stderr: '' };
}

function cmdLogs(env: KubectlEnv, f: Flags): KubectlResult {
  const target = f.positional[0];
  if (!target?.startsWith('deployment/')) throw new Error('logs: the built-in interpreter serves controller deployments: kubectl logs -n cpaas-system deployment/<name>');
  const text = env.logs(target.slice('deployment/'.length));
  if (text === undefined) throw new KubeApiError('NotFound', `deployments.apps "${target.slice('deployment/'.length)}" not found`);
  return { code: 0, stdout: text ? text + '\n' : '', stderr: '' };
}
