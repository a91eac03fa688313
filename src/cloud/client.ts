/**
 * The provider's HCS client: signed JSON calls to ECS, EVS, VPC and IMS.
 * It only speaks HTTP (through an HcsTransport), never into the fake cloud.
 */
import type { Clock } from '../core/index.js';
import { signRequest } from './signer.js';
import type { HcsTransport, HttpRequest, HttpResponse } from './transport.js';
import type {
  CreateServersBody,
  CreateServersResponse,
  CreateVolumeBody,
  CreateVolumeResponse,
  ErrorBody,
  Flavor,
  Image,
  Job,
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
  ak: string;
  sk: string;
  projectId: string;
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
  }

  get projectId(): string {
    return this.opts.projectId;
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
    const signed = signRequest(req, { ak: this.opts.ak, sk: this.opts.sk }, this.host, new Date(this.opts.clock.now()));
    return this.opts.transport.send(signed);
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
    for (let page = 1; ; page++) {
      const r = await this.call<{ count: number; servers: ServerDetail[] }>('ListServersDetails', 'GET', `/v1/${this.p}/cloudservers/detail${qs({ ...base, limit: ECS_MAX_PAGE, offset: page })}`);
      out.push(...r.servers);
      if (r.servers.length < ECS_MAX_PAGE || out.length >= r.count) return out;
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

  async listFlavors(az?: string): Promise<Flavor[]> {
    const r = await this.call<{ flavors: Flavor[] }>('ListFlavors', 'GET', `/v1/${this.p}/cloudservers/flavors${qs({ availability_zone: az })}`);
    return r.flavors;
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
  async listVolumes(q: { name?: string; status?: string; metadata?: Record<string, string> } = {}): Promise<Volume[]> {
    const out: Volume[] = [];
    for (let offset = 0; ; offset += EVS_MAX_PAGE) {
      const r = await this.call<{ count: number; volumes: Volume[] }>(
        'ListVolumes',
        'GET',
        `/v2/${this.p}/cloudvolumes/detail${qs({
          name: q.name,
          status: q.status,
          metadata: q.metadata && Object.keys(q.metadata).length ? JSON.stringify(q.metadata) : undefined,
          limit: EVS_MAX_PAGE,
          offset,
        })}`,
      );
      out.push(...r.volumes);
      if (r.volumes.length < EVS_MAX_PAGE || out.length >= r.count) return out;
    }
  }

  async deleteVolume(id: string): Promise<void> {
    await this.call('DeleteVolume', 'DELETE', `/v2/${this.p}/cloudvolumes/${seg(id)}`);
  }

  // ------------------------------------------------------------ VPC / IMS

  async listSubnets(q: { vpcId?: string } = {}): Promise<Subnet[]> {
    const r = await this.call<{ subnets: Subnet[] }>('ListSubnets', 'GET', `/v1/${this.p}/subnets${qs({ vpc_id: q.vpcId })}`);
    return r.subnets;
  }

  async listImages(q: { name?: string; status?: string } = {}): Promise<Image[]> {
    const r = await this.call<{ images: Image[] }>('ListImages', 'GET', `/v2/cloudimages${qs({ name: q.name, status: q.status })}`);
    return r.images;
  }
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
