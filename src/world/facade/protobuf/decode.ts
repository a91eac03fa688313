/**
 * Request bodies in the Kubernetes protobuf encoding
 * (`application/vnd.kubernetes.protobuf`), decoded into the JSON objects the
 * facade stores. controller-runtime clients send built-in kinds that way
 * (sigs.k8s.io/controller-runtime pkg/client/apiutil/apimachinery.go
 * createRestConfig: ContentType protobuf for every type its protobuf scheme
 * recognizes), e.g. Cluster API's kubeadm bootstrap provider creating a
 * bootstrap-token Secret in a workload cluster. Responses stay JSON: a client
 * decodes by the response's Content-Type.
 *
 * Wire format (k8s.io/apimachinery pkg/runtime/serializer/protobuf): the
 * magic `k8s\0`, then a runtime.Unknown message {1: typeMeta {1: apiVersion,
 * 2: kind}, 2: raw, 3: contentEncoding, 4: contentType}; `raw` is the object's
 * message (field numbers from k8s.io/api and k8s.io/apimachinery
 * generated.proto). Only the kinds in SCHEMAS are decoded; another kind is
 * refused with 415, naming it.
 */

type Field =
  | { name: string; type: 'string' | 'int' | 'bool' | 'bytes' | 'time' }
  | { name: string; type: 'message'; of: string }
  | { name: string; type: 'map'; value: 'string' | 'bytes' }
  | { name: string; type: 'repeated-string' }
  | { name: string; type: 'repeated-message'; of: string };

type Schema = Record<number, Field>;

const SCHEMAS: Record<string, Schema> = {
  ObjectMeta: {
    1: { name: 'name', type: 'string' },
    2: { name: 'generateName', type: 'string' },
    3: { name: 'namespace', type: 'string' },
    5: { name: 'uid', type: 'string' },
    6: { name: 'resourceVersion', type: 'string' },
    7: { name: 'generation', type: 'int' },
    8: { name: 'creationTimestamp', type: 'time' },
    9: { name: 'deletionTimestamp', type: 'time' },
    10: { name: 'deletionGracePeriodSeconds', type: 'int' },
    11: { name: 'labels', type: 'map', value: 'string' },
    12: { name: 'annotations', type: 'map', value: 'string' },
    13: { name: 'ownerReferences', type: 'repeated-message', of: 'OwnerReference' },
    14: { name: 'finalizers', type: 'repeated-string' },
  },
  OwnerReference: {
    1: { name: 'kind', type: 'string' },
    3: { name: 'name', type: 'string' },
    4: { name: 'uid', type: 'string' },
    5: { name: 'apiVersion', type: 'string' },
    6: { name: 'controller', type: 'bool' },
    7: { name: 'blockOwnerDeletion', type: 'bool' },
  },
  Secret: {
    1: { name: 'metadata', type: 'message', of: 'ObjectMeta' },
    2: { name: 'data', type: 'map', value: 'bytes' },
    3: { name: 'type', type: 'string' },
    4: { name: 'stringData', type: 'map', value: 'string' },
    5: { name: 'immutable', type: 'bool' },
  },
  ConfigMap: {
    1: { name: 'metadata', type: 'message', of: 'ObjectMeta' },
    2: { name: 'data', type: 'map', value: 'string' },
    3: { name: 'binaryData', type: 'map', value: 'bytes' },
    4: { name: 'immutable', type: 'bool' },
  },
  // rbac.authorization.k8s.io/v1 (k8s.io/api rbac/v1 generated.proto): KCP writes kubeadm's RBAC into workload clusters
  // (ClusterRole aggregationRule, field 3, is not decoded: kubeadm's roles have none).
  Role: { 1: { name: 'metadata', type: 'message', of: 'ObjectMeta' }, 2: { name: 'rules', type: 'repeated-message', of: 'PolicyRule' } },
  ClusterRole: { 1: { name: 'metadata', type: 'message', of: 'ObjectMeta' }, 2: { name: 'rules', type: 'repeated-message', of: 'PolicyRule' } },
  RoleBinding: { 1: { name: 'metadata', type: 'message', of: 'ObjectMeta' }, 2: { name: 'subjects', type: 'repeated-message', of: 'Subject' }, 3: { name: 'roleRef', type: 'message', of: 'RoleRef' } },
  ClusterRoleBinding: { 1: { name: 'metadata', type: 'message', of: 'ObjectMeta' }, 2: { name: 'subjects', type: 'repeated-message', of: 'Subject' }, 3: { name: 'roleRef', type: 'message', of: 'RoleRef' } },
  PolicyRule: {
    1: { name: 'verbs', type: 'repeated-string' },
    2: { name: 'apiGroups', type: 'repeated-string' },
    3: { name: 'resources', type: 'repeated-string' },
    4: { name: 'resourceNames', type: 'repeated-string' },
    5: { name: 'nonResourceURLs', type: 'repeated-string' },
  },
  Subject: { 1: { name: 'kind', type: 'string' }, 2: { name: 'apiGroup', type: 'string' }, 3: { name: 'name', type: 'string' }, 4: { name: 'namespace', type: 'string' } },
  RoleRef: { 1: { name: 'apiGroup', type: 'string' }, 2: { name: 'kind', type: 'string' }, 3: { name: 'name', type: 'string' } },
  // policy/v1 Eviction (k8s.io/api policy/v1 generated.proto): the Machine controller's drain evicts a Node's Pods
  // (internal/controllers/machine/drain/drain.go evictPod: SubResource("eviction").Create with a policy/v1 Eviction).
  Eviction: { 1: { name: 'metadata', type: 'message', of: 'ObjectMeta' }, 2: { name: 'deleteOptions', type: 'message', of: 'DeleteOptions' } },
  // k8s.io/apimachinery pkg/apis/meta/v1 generated.proto.
  DeleteOptions: {
    1: { name: 'gracePeriodSeconds', type: 'int' },
    2: { name: 'preconditions', type: 'message', of: 'Preconditions' },
    3: { name: 'orphanDependents', type: 'bool' },
    4: { name: 'propagationPolicy', type: 'string' },
    5: { name: 'dryRun', type: 'repeated-string' },
    6: { name: 'ignoreStoreReadErrorWithClusterBreakingPotential', type: 'bool' },
  },
  Preconditions: { 1: { name: 'uid', type: 'string' }, 2: { name: 'resourceVersion', type: 'string' } },
  // core/v1 Namespace (k8s.io/api core/v1 generated.proto): `kubectl create namespace` sends it as protobuf.
  Namespace: { 1: { name: 'metadata', type: 'message', of: 'ObjectMeta' }, 2: { name: 'spec', type: 'message', of: 'NamespaceSpec' }, 3: { name: 'status', type: 'message', of: 'NamespaceStatus' } },
  NamespaceSpec: { 1: { name: 'finalizers', type: 'repeated-string' } },
  NamespaceStatus: { 1: { name: 'phase', type: 'string' } },
  // authorization.k8s.io/v1 (k8s.io/api authorization/v1 generated.proto): `kubectl auth can-i [--list]` sends these as protobuf
  // (field selector / label selector attributes, 8 and 9, are not decoded: the facade allows everything anyway).
  SelfSubjectAccessReview: { 1: { name: 'metadata', type: 'message', of: 'ObjectMeta' }, 2: { name: 'spec', type: 'message', of: 'SelfSubjectAccessReviewSpec' } },
  SelfSubjectAccessReviewSpec: { 1: { name: 'resourceAttributes', type: 'message', of: 'ResourceAttributes' }, 2: { name: 'nonResourceAttributes', type: 'message', of: 'NonResourceAttributes' } },
  ResourceAttributes: {
    1: { name: 'namespace', type: 'string' },
    2: { name: 'verb', type: 'string' },
    3: { name: 'group', type: 'string' },
    4: { name: 'version', type: 'string' },
    5: { name: 'resource', type: 'string' },
    6: { name: 'subresource', type: 'string' },
    7: { name: 'name', type: 'string' },
  },
  NonResourceAttributes: { 1: { name: 'path', type: 'string' }, 2: { name: 'verb', type: 'string' } },
  SelfSubjectRulesReview: { 1: { name: 'metadata', type: 'message', of: 'ObjectMeta' }, 2: { name: 'spec', type: 'message', of: 'SelfSubjectRulesReviewSpec' } },
  SelfSubjectRulesReviewSpec: { 1: { name: 'namespace', type: 'string' } },
};
/** Schemas of embedded messages only, not kinds a body may carry. */
const PARTS = new Set(['ObjectMeta', 'OwnerReference', 'PolicyRule', 'Subject', 'RoleRef', 'Preconditions', 'NamespaceSpec', 'NamespaceStatus', 'SelfSubjectAccessReviewSpec', 'ResourceAttributes', 'NonResourceAttributes', 'SelfSubjectRulesReviewSpec']);

export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

export class ProtobufError extends Error {
  constructor(
    message: string,
    /** 415: a kind the facade cannot decode; 400: a malformed body. */
    readonly code: 400 | 415,
  ) {
    super(message);
  }
}

export class Reader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}
  done(): boolean {
    return this.pos >= this.buf.length;
  }
  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new ProtobufError('truncated varint', 400);
      const b = this.buf[this.pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 70n) throw new ProtobufError('varint too long', 400);
    }
  }
  bytes(): Buffer {
    const n = Number(this.varint());
    if (this.pos + n > this.buf.length) throw new ProtobufError('truncated length-delimited field', 400);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new ProtobufError(`unsupported wire type ${wire}`, 400);
  }
}

/** Each (field number, wire type, reader positioned at the value) of a message. */
export function* fields(buf: Buffer): Generator<{ no: number; wire: number; r: Reader }> {
  const r = new Reader(buf);
  while (!r.done()) {
    const tag = Number(r.varint());
    yield { no: tag >>> 3, wire: tag & 7, r };
  }
}

function decodeTime(buf: Buffer): string {
  let seconds = 0n;
  for (const { no, wire, r } of fields(buf)) {
    if (no === 1 && wire === 0) seconds = r.varint();
    else r.skip(wire);
  }
  return new Date(Number(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function decodeMessage(buf: Buffer, schemaName: string): Record<string, unknown> {
  const schema = SCHEMAS[schemaName]!;
  const out: Record<string, unknown> = {};
  for (const { no, wire, r } of fields(buf)) {
    const f = schema[no];
    if (!f) {
      r.skip(wire);
      continue;
    }
    switch (f.type) {
      case 'string':
        out[f.name] = r.bytes().toString('utf8');
        break;
      case 'bytes':
        out[f.name] = r.bytes().toString('base64');
        break;
      case 'int':
        out[f.name] = Number(BigInt.asIntN(64, r.varint()));
        break;
      case 'bool':
        out[f.name] = r.varint() !== 0n;
        break;
      case 'time':
        out[f.name] = decodeTime(r.bytes());
        break;
      case 'message':
        out[f.name] = decodeMessage(r.bytes(), f.of);
        break;
      case 'repeated-string':
        ((out[f.name] ??= []) as string[]).push(r.bytes().toString('utf8'));
        break;
      case 'repeated-message':
        ((out[f.name] ??= []) as unknown[]).push(decodeMessage(r.bytes(), f.of));
        break;
      case 'map': {
        let k = '';
        let v: string = '';
        for (const e of fields(r.bytes())) {
          if (e.no === 1) k = e.r.bytes().toString('utf8');
          else if (e.no === 2) {
            const b = e.r.bytes();
            v = f.value === 'bytes' ? b.toString('base64') : b.toString('utf8');
          } else e.r.skip(e.wire);
        }
        ((out[f.name] ??= {}) as Record<string, string>)[k] = v;
        break;
      }
    }
  }
  return out;
}

/** Decode a protobuf-encoded Kubernetes object into its JSON form (apiVersion and kind included). */
export function decodeKubeProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw new ProtobufError('the protobuf body does not start with the k8s\\0 magic', 400);
  let apiVersion = '';
  let kind = '';
  let raw: Buffer | undefined;
  for (const { no, wire, r } of fields(body.subarray(4))) {
    if (no === 1 && wire === 2) {
      for (const t of fields(r.bytes())) {
        if (t.no === 1) apiVersion = t.r.bytes().toString('utf8');
        else if (t.no === 2) kind = t.r.bytes().toString('utf8');
        else t.r.skip(t.wire);
      }
    } else if (no === 2 && wire === 2) raw = r.bytes();
    else r.skip(wire);
  }
  if (!SCHEMAS[kind] || PARTS.has(kind)) {
    throw new ProtobufError(`the facade decodes protobuf request bodies only for ${Object.keys(SCHEMAS).filter((k) => !PARTS.has(k)).join(', ')}; send ${kind || 'this object'} as application/json`, 415);
  }
  return { apiVersion, kind, ...decodeMessage(raw ?? Buffer.alloc(0), kind) };
}
