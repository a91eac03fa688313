/**
 * The provider's HCS client: JSON calls to ECS, EVS, VPC, IMS and IAM,
 * authenticated by AK/SK signing (SDK-HMAC-SHA256) or an IAM token
 * (X-Auth-Token). It only speaks HTTP (through an HcsTransport), never into
 * the fake cloud.
 */
import type { Clock } from '../../core/index.js';
import { signRequest } from './signer.js';
import type { HcsTransport, HttpRequest, HttpResponse } from './transport.js';
import type {
  BlockDevice,
  BlockDeviceList,
  CreatePortBody,
  CreateServersBody,
  CreateServersResponse,
  CreateVolumeBody,
  CreateVolumeResponse,
  ErrorBody,
  Flavor,
  Image,
  IssuedToken,
  Job,
  ListPortsQuery,
  Port,
  PrivateIp,
  Project,
  ServerDetail,
  Subnet,
  Volume,
} from './types.js';

export class HcsApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly operation: string,
    readonly requestId?: string,
  ) {
    super(`${operation}: HTTP ${status} ${code}: ${message}${requestId ? ` (request ${requestId})` : ''}`);
    this.name = 'HcsApiError';
  }
}

export interface HcsClientOptions {
  transport: HcsTransport;
  /** AK/SK signing (the default). Omit both to authenticate with `token` instead. */
  ak?: string;
  sk?: string;
  /**
   * IAM token (X-Auth-Token) used when no AK/SK is given; a function is asked before every call (refresh it there)
   * and, when the cloud answers a call 401 (the token expired or was revoked: IAM tokens live 24 h), asked again with
   * the rejected token: a different token it returns (re-authenticated) is sent once more with the same call.
   */
  token?: string | ((rejected?: string) => string | Promise<string>);
  projectId: string;
  /**
   * Page size of the list calls that fetch every page (default: each API's maximum, 1000 for ECS and EVS, 2000 for
   * VPC). Smaller pages take the paging loops with small pools (issue 37: lists longer than one page).
   */
  pageSize?: number;
  /** Signed host header; defaults to the transport's host. */
  host?: string;
  clock: Clock;
}

export interface ListServersQuery {
  name?: string;
  status?: string;
  tags?: string;
  limit?: number;
  /** ECS page number (from 1), not an item offset. */
  offset?: number;
}

const ECS_MAX_PAGE = 1000;
const VPC_MAX_PAGE = 2000;
const EVS_MAX_PAGE = 1000;

function qs(params: Record<string, string | number | undefined>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

const seg = encodeURIComponent;

export class HcsClient {
  private readonly host: string;

  constructor(private readonly opts: HcsClientOptions) {
    this.host = opts.host ?? opts.transport.host ?? 'localhost';
    if ((opts.ak === undefined) !== (opts.sk === undefined)) throw new Error('HcsClient: ak and sk go together');
    if (opts.ak === undefined && opts.token === undefined) throw new Error('HcsClient needs ak and sk, or a token');
  }

  get projectId(): string {
    return this.opts.projectId;
  }

  /** The page size of a list API whose maximum is `max`. */
  private page(max: number): number {
    return Math.max(1, Math.min(max, this.opts.pageSize ?? max));
  }

  private get p(): string {
    return seg(this.opts.projectId);
  }

  /** Send a signed JSON request; returns the parsed body, or throws HcsApiError on a non-2xx status. */
  private async call<T>(operation: string, method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<T> {
    const res = await this.raw(method, path, body, extraHeaders);
    if (res.status < 200 || res.status >= 300) throw toApiError(operation, res);
    if (res.body.trim() === '') return undefined as T;
    try {
      return JSON.parse(res.body) as T;
    } catch {
      throw new HcsApiError(res.status, 'InvalidResponse', `response is not JSON: ${res.body.slice(0, 200)}`, operation, res.headers['x-request-id']);
    }
  }

  private async raw(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<HttpResponse> {
    const req: HttpRequest = {
      method,
      path,
      headers: { 'content-type': 'application/json', 'x-project-id': this.opts.projectId, ...extraHeaders },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    };
    const { ak, sk, token } = this.opts;
    if (ak !== undefined && sk !== undefined) {
      return this.opts.transport.send(signRequest(req, { ak, sk }, this.host, new Date(this.opts.clock.now())));
    }
    const t = typeof token === 'function' ? await token() : token!;
    const res = await this.opts.transport.send({ ...req, headers: { ...req.headers, 'x-auth-token': t } });
    if (res.status !== 401 || typeof token !== 'function') return res;
    const fresh = await token(t);
    return fresh === t ? res : this.opts.transport.send({ ...req, headers: { ...req.headers, 'x-auth-token': fresh } });
  }

  /** GET that maps 404 to undefined. */
  private async find<T>(operation: string, path: string): Promise<T | undefined> {
    try {
      return await this.call<T>(operation, 'GET', path);
    } catch (e) {
      if (e instanceof HcsApiError && e.status === 404) return undefined;
      throw e;
    }
  }

  // ------------------------------------------------------------ ECS

  createServers(body: CreateServersBody, clientToken?: string): Promise<CreateServersResponse> {
    return this.call('CreateServers', 'POST', `/v1.1/${this.p}/cloudservers`, body, clientToken ? { 'x-client-token': clientToken } : {});
  }

  showJob(jobId: string): Promise<Job> {
    return this.call('ShowJob', 'GET', `/v1/${this.p}/jobs/${seg(jobId)}`);
  }

  async showServer(id: string): Promise<ServerDetail | undefined> {
    try {
      const r = await this.call<{ server: ServerDetail }>('ShowServer', 'GET', `/v1/${this.p}/cloudservers/${seg(id)}`);
      return r.server;
    } catch (e) {
      if (e instanceof HcsApiError && e.status === 404) return undefined;
      throw e;
    }
  }

  /**
   * List servers. Without limit/offset every page is fetched. Note: ECS `name`
   * is a fuzzy match ("." matches any character, substrings match): compare
   * names exactly on the result when you need one server.
   */
  async listServers(q: ListServersQuery = {}): Promise<ServerDetail[]> {
    const base = { name: q.name, status: q.status, tags: q.tags };
    if (q.limit !== undefined || q.offset !== undefined) {
      const r = await this.call<{ count: number; servers: ServerDetail[] }>('ListServersDetails', 'GET', `/v1/${this.p}/cloudservers/detail${qs({ ...base, limit: q.limit, offset: q.offset })}`);
      return r.servers;
    }
    const out: ServerDetail[] = [];
    const limit = this.page(ECS_MAX_PAGE);
    for (let page = 1; ; page++) {
      const r = await this.call<{ count: number; servers: ServerDetail[] }>('ListServersDetails', 'GET', `/v1/${this.p}/cloudservers/detail${qs({ ...base, limit, offset: page })}`);
      out.push(...r.servers);
      if (r.servers.length < limit || out.length >= r.count) return out;
    }
  }

  deleteServers(ids: string[], opts: { deleteVolume?: boolean; deletePublicIp?: boolean } = {}): Promise<{ job_id: string }> {
    return this.call('DeleteServers', 'POST', `/v1/${this.p}/cloudservers/delete`, {
      servers: ids.map((id) => ({ id })),
      delete_volume: opts.deleteVolume ?? false,
      delete_publicip: opts.deletePublicIp ?? false,
    });
  }

  attachVolume(serverId: string, volumeId: string, device?: string): Promise<{ job_id: string }> {
    return this.call('AttachServerVolume', 'POST', `/v1/${this.p}/cloudservers/${seg(serverId)}/attachvolume`, {
      volumeAttachment: { volumeId, ...(device ? { device } : {}) },
    });
  }

  detachVolume(serverId: string, volumeId: string): Promise<{ job_id: string }> {
    return this.call('DetachServerVolume', 'DELETE', `/v1/${this.p}/cloudservers/${seg(serverId)}/detachvolume/${seg(volumeId)}`);
  }

  /**
   * Flavors (sold in `az` when given). `os_extra_specs["cond:operation:az"]` holds the sell
   * status per AZ ("az1(normal),az2(sellout)"); `cond:operation:status` the status in `az`.
   */
  async listFlavors(az?: string): Promise<Flavor[]> {
    const r = await this.call<{ flavors: Flavor[] }>('ListFlavors', 'GET', `/v1/${this.p}/cloudservers/flavors${qs({ availability_zone: az })}`);
    return r.flavors;
  }

  /**
   * NovaListAvailabilityZones: GET /v2.1/{project_id}/os-availability-zone -> {availabilityZoneInfo: [{zoneName,
   * zoneState: {available}, hosts}]} (https://support.huaweicloud.com/api-ecs/ecs_03_1801.html).
   */
  async listAvailabilityZones(): Promise<{ zoneName: string; zoneState: { available: boolean } }[]> {
    const r = await this.call<{ availabilityZoneInfo: { zoneName: string; zoneState: { available: boolean } }[] }>('NovaListAvailabilityZones', 'GET', `/v2.1/${this.p}/os-availability-zone`);
    return r.availabilityZoneInfo;
  }

  /** os-stop (SOFT by default): ACTIVE -> SHUTOFF through a job. */
  stopServers(ids: string[], type: 'SOFT' | 'HARD' = 'SOFT'): Promise<{ job_id: string }> {
    return this.call('BatchStopServers', 'POST', `/v1/${this.p}/cloudservers/action`, { 'os-stop': { servers: ids.map((id) => ({ id })), type } });
  }

  /** os-start: SHUTOFF -> ACTIVE through a job. */
  startServers(ids: string[]): Promise<{ job_id: string }> {
    return this.call('BatchStartServers', 'POST', `/v1/${this.p}/cloudservers/action`, { 'os-start': { servers: ids.map((id) => ({ id })) } });
  }

  /** reboot: REBOOT / HARD_REBOOT -> ACTIVE through a job. */
  rebootServers(ids: string[], type: 'SOFT' | 'HARD' = 'SOFT'): Promise<{ job_id: string }> {
    return this.call('BatchRebootServers', 'POST', `/v1/${this.p}/cloudservers/action`, { reboot: { servers: ids.map((id) => ({ id })), type } });
  }

  /** Disks attached to a server (system disk included); undefined when the server does not exist. */
  async listServerBlockDevices(serverId: string): Promise<BlockDevice[] | undefined> {
    const r = await this.find<BlockDeviceList>('ListServerBlockDevices', `/v1/${this.p}/cloudservers/${seg(serverId)}/block_device`);
    return r?.volumeAttachments;
  }

  /** One attached disk; undefined when the server does not exist or the volume is not attached to it. */
  async showServerBlockDevice(serverId: string, volumeId: string): Promise<BlockDevice | undefined> {
    const r = await this.find<{ volumeAttachment: BlockDevice }>('ShowServerBlockDevice', `/v1/${this.p}/cloudservers/${seg(serverId)}/block_device/${seg(volumeId)}`);
    return r?.volumeAttachment;
  }

  // ------------------------------------------------------------ EVS

  createVolume(body: CreateVolumeBody): Promise<CreateVolumeResponse> {
    return this.call('CreateVolume', 'POST', `/v2.1/${this.p}/cloudvolumes`, body);
  }

  async showVolume(id: string): Promise<Volume | undefined> {
    try {
      const r = await this.call<{ volume: Volume }>('ShowVolume', 'GET', `/v2/${this.p}/cloudvolumes/${seg(id)}`);
      return r.volume;
    } catch (e) {
      if (e instanceof HcsApiError && e.status === 404) return undefined;
      throw e;
    }
  }

  /** List volumes (all pages). `metadata` matches volumes carrying every given key/value. `name` is a fuzzy (substring) match. */
  async listVolumes(q: { name?: string; status?: string; metadata?: Record<string, string>; serverId?: string } = {}): Promise<Volume[]> {
    const out: Volume[] = [];
    const limit = this.page(EVS_MAX_PAGE);
    for (let offset = 0; ; offset += limit) {
      const r = await this.call<{ count: number; volumes: Volume[] }>(
        'ListVolumes',
        'GET',
        `/v2/${this.p}/cloudvolumes/detail${qs({
          name: q.name,
          status: q.status,
          server_id: q.serverId,
          metadata: q.metadata && Object.keys(q.metadata).length ? JSON.stringify(q.metadata) : undefined,
          limit,
          offset,
        })}`,
      );
      out.push(...r.volumes);
      if (r.volumes.length < limit || out.length >= r.count) return out;
    }
  }

  /** EVS UpdateVolume: name, description, metadata keys (null removes a key). The response is the volume itself, not `{volume}` (EVS API reference). */
  async updateVolume(id: string, volume: { name?: string; description?: string; metadata?: Record<string, string | null> }): Promise<Volume> {
    return this.call<Volume>('UpdateVolume', 'PUT', `/v2/${this.p}/cloudvolumes/${seg(id)}`, { volume });
  }

  async deleteVolume(id: string): Promise<void> {
    await this.call('DeleteVolume', 'DELETE', `/v2/${this.p}/cloudvolumes/${seg(id)}`);
  }

  // ------------------------------------------------------------ VPC / IMS

  async listSubnets(q: { vpcId?: string } = {}): Promise<Subnet[]> {
    const r = await this.call<{ subnets: Subnet[] }>('ListSubnets', 'GET', `/v1/${this.p}/subnets${qs({ vpc_id: q.vpcId })}`);
    return r.subnets;
  }

  async showSubnet(id: string): Promise<Subnet | undefined> {
    return (await this.find<{ subnet: Subnet }>('ShowSubnet', `/v1/${this.p}/subnets/${seg(id)}`))?.subnet;
  }

  /** Ports of the project (server NICs included: device_owner "compute:<az>", device_id = server id); all pages. */
  async listPorts(q: ListPortsQuery = {}): Promise<Port[]> {
    const out: Port[] = [];
    const base = {
      name: q.name,
      network_id: q.networkId,
      device_id: q.deviceId,
      device_owner: q.deviceOwner,
      status: q.status,
      fixed_ips: q.ipAddress !== undefined ? `ip_address=${q.ipAddress}` : undefined,
    };
    for (let marker: string | undefined; ; ) {
      const r = await this.call<{ ports: Port[] }>('ListPorts', 'GET', `/v1/${this.p}/ports${qs({ ...base, limit: this.page(VPC_MAX_PAGE), marker })}`);
      out.push(...r.ports);
      if (r.ports.length < this.page(VPC_MAX_PAGE)) return out;
      marker = r.ports[r.ports.length - 1]!.id;
    }
  }

  async showPort(id: string): Promise<Port | undefined> {
    return (await this.find<{ port: Port }>('ShowPort', `/v1/${this.p}/ports/${seg(id)}`))?.port;
  }

  async createPort(body: CreatePortBody): Promise<Port> {
    return (await this.call<{ port: Port }>('CreatePort', 'POST', `/v1/${this.p}/ports`, body)).port;
  }

  async deletePort(id: string): Promise<void> {
    await this.call('DeletePort', 'DELETE', `/v1/${this.p}/ports/${seg(id)}`);
  }

  /** Reserve private IPs (a given ip_address, or the next free one); all or nothing. Conflicts are HcsApiError 400 Ecs.0010 (NET-7). */
  async createPrivateIps(entries: { subnetId: string; ipAddress?: string }[]): Promise<PrivateIp[]> {
    const body = { privateips: entries.map((e) => ({ subnet_id: e.subnetId, ...(e.ipAddress !== undefined ? { ip_address: e.ipAddress } : {}) })) };
    return (await this.call<{ privateips: PrivateIp[] }>('CreatePrivateip', 'POST', `/v1/${this.p}/privateips`, body)).privateips;
  }

  /** Private IPs in use in a subnet (server NICs, ports and reserved IPs of this project); all pages. */
  async listPrivateIps(subnetId: string): Promise<PrivateIp[]> {
    const out: PrivateIp[] = [];
    for (let marker: string | undefined; ; ) {
      const r = await this.call<{ privateips: PrivateIp[] }>('ListPrivateips', 'GET', `/v1/${this.p}/subnets/${seg(subnetId)}/privateips${qs({ limit: this.page(VPC_MAX_PAGE), marker })}`);
      out.push(...r.privateips);
      if (r.privateips.length < this.page(VPC_MAX_PAGE)) return out;
      marker = r.privateips[r.privateips.length - 1]!.id;
    }
  }

  async deletePrivateIp(id: string): Promise<void> {
    await this.call('DeletePrivateip', 'DELETE', `/v1/${this.p}/privateips/${seg(id)}`);
  }

  // ------------------------------------------------------------ IAM

  /** Projects of the credentials' account (GET /v3/projects), optionally by exact name. */
  async listProjects(q: { name?: string } = {}): Promise<Project[]> {
    return (await this.call<{ projects: Project[] }>('KeystoneListProjects', 'GET', `/v3/projects${qs({ name: q.name })}`)).projects;
  }

  async listImages(q: { name?: string; status?: string } = {}): Promise<Image[]> {
    const r = await this.call<{ images: Image[] }>('ListImages', 'GET', `/v2/cloudimages${qs({ name: q.name, status: q.status })}`);
    return r.images;
  }
}

/**
 * Get an IAM token with a password (Keystone v3, POST /v3/auth/tokens; no AK/SK
 * needed). `project` scopes it (by id, or by name); without it the token is
 * domain-scoped. Wrong credentials: HcsApiError 401.
 */
export async function issueToken(
  transport: HcsTransport,
  o: { user: string; password: string; domain: string; project?: { id: string } | { name: string } },
): Promise<IssuedToken> {
  const body = {
    auth: {
      identity: { methods: ['password'], password: { user: { name: o.user, password: o.password, domain: { name: o.domain } } } },
      ...(o.project ? { scope: { project: o.project } } : {}),
    },
  };
  const res = await transport.send({ method: 'POST', path: '/v3/auth/tokens?nocatalog=true', headers: { 'content-type': 'application/json;charset=UTF-8' }, body: JSON.stringify(body) });
  if (res.status !== 201) throw toApiError('KeystoneCreateUserTokenByPassword', res);
  const token = res.headers['x-subject-token'];
  if (!token) throw new HcsApiError(res.status, 'InvalidResponse', 'no X-Subject-Token header in the response', 'KeystoneCreateUserTokenByPassword', res.headers['x-request-id']);
  const parsed = JSON.parse(res.body) as IssuedToken['body'];
  return { token, expiresAt: parsed.token.expires_at, ...(parsed.token.project ? { projectId: parsed.token.project.id } : {}), body: parsed };
}

function toApiError(operation: string, res: HttpResponse): HcsApiError {
  let code = `HTTP.${res.status}`;
  let message = res.body.slice(0, 500);
  try {
    const b = JSON.parse(res.body) as ErrorBody;
    code = b.error?.code ?? b.error_code ?? b.code ?? code;
    message = b.error?.message ?? b.error_msg ?? b.message ?? message;
  } catch {
    // not JSON: keep the raw text
  }
  return new HcsApiError(res.status, code, message, operation, res.headers['x-request-id']);
}
