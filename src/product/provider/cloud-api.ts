/**
 * The part of the HCS cloud API the provider uses: the HcsClient's own calls
 * (src/product/cloud, one module per service), picked by name, with the wire
 * types of src/core/hcs. A test may pass any object with these methods.
 */
import type { AvailabilityZone, CreateServersBody, CreateVolumeBody, Image, Job, ServerAddress, ServerDetail, ServerVolumeAttachment, Subnet, Volume, VolumeAttachment } from '../../core/hcs/index.js';
import type { HcsClient } from '../cloud/index.js';

export type CloudApi = Pick<
  HcsClient,
  | 'createServers'
  | 'showJob'
  | 'showServer'
  | 'listServers'
  | 'deleteServers'
  | 'attachVolume'
  | 'detachVolume'
  | 'createVolume'
  | 'showVolume'
  | 'listVolumes'
  | 'listSubnets'
  | 'listImages'
  | 'listFlavors'
> &
  /** NovaListAvailabilityZones; only needed for control plane failure domains. */
  Partial<Pick<HcsClient, 'listAvailabilityZones'>>;

export type CloudJob = Job;
export type CloudServer = ServerDetail;
export type CloudServerAddress = ServerAddress;
export type CloudServerVolume = ServerVolumeAttachment;
export type CloudVolume = Volume;
export type CloudVolumeAttachment = VolumeAttachment;
export type CloudSubnet = Subnet;
export type CloudImage = Image;
export type CreateServerRequest = CreateServersBody;
export type CreateVolumeRequest = CreateVolumeBody;
export type CloudAvailabilityZone = AvailabilityZone;

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
