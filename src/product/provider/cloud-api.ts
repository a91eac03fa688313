/**
 * The part of the HCS cloud API the provider uses, as a structural interface.
 *
 * `HcsClient` (src/product/cloud) satisfies it; tests may also pass any object with
 * these methods. Field names follow the wire (snake_case, "OS-EXT-..." keys),
 * and every field the provider does not strictly need is optional, so the
 * real client's richer types stay assignable.
 */

export interface CloudJob {
  job_id?: string;
  status: 'INIT' | 'RUNNING' | 'SUCCESS' | 'FAIL' | string;
  fail_reason?: string | null;
  error_code?: string | null;
}

export interface CloudServerVolume {
  id: string;
  device?: string;
  bootIndex?: string | number;
  delete_on_termination?: string | boolean;
}

export interface CloudServerAddress {
  addr: string;
  version?: string | number;
  'OS-EXT-IPS:type'?: string;
  'OS-EXT-IPS:port_id'?: string;
}

export interface CloudServer {
  id: string;
  name: string;
  status: string;
  'OS-EXT-STS:task_state'?: string | null;
  'OS-EXT-AZ:availability_zone'?: string;
  'os-extended-volumes:volumes_attached'?: CloudServerVolume[];
  addresses?: Record<string, CloudServerAddress[]>;
  metadata?: Record<string, string>;
  image?: { id: string } | string;
  fault?: { code?: number; message?: string; details?: string };
}

export interface CloudVolumeAttachment {
  server_id: string;
  device?: string;
  attachment_id?: string;
  volume_id?: string;
}

export interface CloudVolume {
  id: string;
  name: string;
  status: string;
  size?: number;
  volume_type?: string;
  availability_zone?: string;
  metadata?: Record<string, string>;
  attachments?: CloudVolumeAttachment[];
  created_at?: string;
}

export interface CloudSubnet {
  id: string;
  name: string;
  cidr: string;
  gateway_ip?: string;
  vpc_id: string;
  neutron_subnet_id?: string;
}

export interface CloudImage {
  id: string;
  name: string;
  status?: string;
  /** Kubernetes version carried by the image (mock-hcs IMS extension; BOOT-4). */
  __support_kubernetes_version?: string;
}

export interface CloudFlavor {
  id: string;
  name: string;
}

export interface CreateServerRequest {
  server: {
    name: string;
    imageRef: string;
    flavorRef: string;
    availability_zone: string;
    vpcid: string;
    nics: { subnet_id: string; ip_address: string }[];
    root_volume: { volumetype: string; size: number };
    data_volumes?: { volumetype: string; size: number }[];
    /** base64 */
    user_data?: string;
    metadata?: Record<string, string>;
    server_tags?: { key: string; value: string }[];
    count?: number;
  };
}

export interface CreateVolumeRequest {
  volume: { name: string; size: number; volume_type: string; availability_zone: string; metadata?: Record<string, string> };
}

export interface CloudApi {
  createServers(body: CreateServerRequest, clientToken?: string): Promise<{ job_id: string; serverIds: string[] }>;
  showJob(jobId: string): Promise<CloudJob>;
  showServer(id: string): Promise<CloudServer | undefined>;
  listServers(q?: { name?: string; status?: string }): Promise<CloudServer[]>;
  deleteServers(ids: string[], opts?: { deleteVolume?: boolean }): Promise<{ job_id: string }>;
  attachVolume(serverId: string, volumeId: string, device?: string): Promise<{ job_id: string }>;
  detachVolume(serverId: string, volumeId: string): Promise<{ job_id: string }>;
  createVolume(body: CreateVolumeRequest): Promise<{ job_id: string; volume_ids: string[] }>;
  showVolume(id: string): Promise<CloudVolume | undefined>;
  listVolumes(q?: { name?: string; status?: string; metadata?: Record<string, string>; serverId?: string }): Promise<CloudVolume[]>;
  listSubnets(q?: Record<string, string>): Promise<CloudSubnet[]>;
  listImages(q?: { name?: string }): Promise<CloudImage[]>;
  listFlavors(az?: string): Promise<CloudFlavor[]>;
  /** NovaListAvailabilityZones (GET /v2.1/{project_id}/os-availability-zone); only needed for control plane failure domains. */
  listAvailabilityZones?(): Promise<CloudAvailabilityZone[]>;
}

/** One entry of NovaListAvailabilityZones' availabilityZoneInfo. */
export interface CloudAvailabilityZone {
  zoneName: string;
  zoneState: { available: boolean };
}

/** Errors of the cloud client: HcsApiError {status, code, message}. Matched structurally. */
export interface CloudErrorLike {
  status: number;
  code: string;
  message: string;
}

export function asCloudError(e: unknown): CloudErrorLike | undefined {
  if (typeof e === 'object' && e !== null && 'status' in e && 'code' in e) {
    const o = e as { status: unknown; code: unknown; message?: unknown };
    if (typeof o.status === 'number' && typeof o.code === 'string') {
      return { status: o.status, code: o.code, message: stableMessage(typeof o.message === 'string' ? o.message : String(o.code)) };
    }
  }
  return undefined;
}

/**
 * A refusal to retry as it comes, not to report as a configuration error: a server error (5xx) or API Gateway flow
 * control (429 APIGW.0308, "The throttling threshold has been reached": wait 2 to 5 s and resend, as the HCS FAQ
 * "How Do I Handle the Error APIG.0308?" says). Issue 37's throttling flow found a throttled ListFlavors taken for a
 * wrong availability zone and the Machine failed for good.
 */
export function isTransientCloudError(ce: CloudErrorLike): boolean {
  return ce.status >= 500 || ce.status === 429;
}

/** Server ids of a volume's attachments. */
export function attachedServers(v: CloudVolume): string[] {
  return (v.attachments ?? []).map((a) => a.server_id);
}

/** Fixed IPs of a server, in address-list order. */
export function serverIps(s: CloudServer): string[] {
  const out: string[] = [];
  for (const list of Object.values(s.addresses ?? {})) for (const a of list) out.push(a.addr);
  return out;
}

/** Drop per-request noise (request ids, the client's "Operation: HTTP nnn code:" prefix) so condition messages stay stable across retries. */
export function stableMessage(msg: string): string {
  return msg.replace(/\s*\(request [^)]*\)/g, '').replace(/^\w+: HTTP \d+ [\w.]+: /, '');
}
