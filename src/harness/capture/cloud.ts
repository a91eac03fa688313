/**
 * The HCS project as the documented list calls show it, paged by marker the
 * way the official SDKs page (huaweicloudsdkecs ListServersDetailsRequest,
 * huaweicloudsdkevs ListVolumesRequest, huaweicloudsdkvpc ListPortsRequest /
 * ListSubnetsRequest, huaweicloudsdkims ListImagesRequest: `limit` and
 * `marker` = the id of the last item of the previous page). A page shorter
 * than the limit ends the list. No mock-hcs /_admin call, nothing a real HCS
 * does not answer.
 */
import { HcsApiError, type HcsClient, type PagedList } from '../../product/cloud/index.js';
import type { BundleCloud, BundleServer, BundleVolume } from './bundle.js';
import type { Redactor } from './redact.js';

/** Largest page each API takes (ECS and EVS 1000, VPC 2000, IMS 1000). */
const MAX_PAGE: Record<PagedList, number> = { servers: 1000, volumes: 1000, ports: 2000, subnets: 2000, images: 1000 };

/** How a capture waits before retrying a throttled call (real time by default; the testbed's capture moves its virtual clock). */
export type Wait = (ms: number) => Promise<void>;
const realWait: Wait = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * `call`, retried while the cloud answers 429 (API Gateway flow control, APIGW.0308: the documented answer to a
 * burst; the caller is to slow down and retry): waits 1, 2, 4, 8, 16 s, then gives up with the last error.
 */
export async function retryThrottled<T>(call: () => Promise<T>, wait: Wait = realWait): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (!(e instanceof HcsApiError && e.status === 429) || attempt >= 5) throw e;
      await wait(1000 * 2 ** attempt);
    }
  }
}

/** Every item of a list call, page by page (at most `maxPages` pages: a cloud that never ends its list is an error). */
export async function listAll<T extends { id: string }>(cloud: HcsClient, what: PagedList, pageSize?: number, maxPages = 100_000, wait: Wait = realWait): Promise<T[]> {
  const max = MAX_PAGE[what];
  const limit = Math.min(pageSize ?? max, max);
  const out: T[] = [];
  const seen = new Set<string>();
  let marker: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    // The list's items as the caller types them (listPage checks only that each has an id).
    const m = marker;
    const items = (await retryThrottled(() => cloud.listPage(what, { limit, ...(m ? { marker: m } : {}) }), wait)) as T[];
    for (const x of items) {
      if (seen.has(x.id)) throw new Error(`${what}: the cloud listed ${x.id} twice while paging by marker (page ${page + 1}); the list changed under the capture or the cloud ignores the marker — capture again`);
      seen.add(x.id);
      out.push(x);
    }
    if (items.length < limit) return out;
    marker = items[items.length - 1]!.id;
  }
  throw new Error(`${what}: more than ${maxPages} pages of ${limit}; the cloud did not end its list`);
}

export interface ListCloudOptions {
  pageSize?: number;
  /** How to wait before retrying a throttled call (default: real time). */
  wait?: Wait;
  /**
   * Servers the management cluster names (HCSMachine status.serverId): one the list does not show — or a server a
   * listed volume is attached to — is read with ShowServer (ECS lists lag behind creates: a server created moments ago can be missing from
   * ListServersDetails while ShowServer already answers it), so a capture made just after a create keeps it.
   */
  expectServers?: readonly string[];
}

const USER_DATA = 'OS-EXT-SRV-ATTR:user_data';
/** Where a server's user data goes in the bundle: decoded, its private keys and tokens cut (redact.ts). */
export const USER_DATA_REDACTED = 'user_data_redacted';

export async function listCloud(cloud: HcsClient, red: Redactor, o: ListCloudOptions = {}): Promise<BundleCloud> {
  const wait = o.wait ?? realWait;
  const listed = await listAll<BundleServer>(cloud, 'servers', o.pageSize, undefined, wait);
  const rawVolumes = await listAll<BundleVolume>(cloud, 'volumes', o.pageSize, undefined, wait);
  const have = new Set(listed.map((s) => s.id));
  const attachedTo = rawVolumes.flatMap((v) => (v.attachments ?? []).map((a) => a.server_id)).filter((id): id is string => !!id);
  for (const id of [...(o.expectServers ?? []), ...attachedTo]) {
    if (have.has(id)) continue;
    have.add(id);
    const s = await retryThrottled(() => cloud.showServer(id), wait);
    if (s) listed.push(s as unknown as BundleServer);
  }
  const servers = listed.map((s) => {
    const c: BundleServer = { ...s };
    const ud = c[USER_DATA];
    delete c[USER_DATA];
    if (typeof ud === 'string' && ud !== '') c[USER_DATA_REDACTED] = red.userData(Buffer.from(ud, 'base64').toString('utf8'), `server ${s.name} (${s.id})`);
    return red.strings(c, `server ${s.name}`);
  });
  const volumes = rawVolumes.map((v) => red.strings(v, `volume ${v.name}`));
  const ports = await listAll<{ id: string } & Record<string, unknown>>(cloud, 'ports', o.pageSize, undefined, wait);
  const subnets = await listAll<{ id: string } & Record<string, unknown>>(cloud, 'subnets', o.pageSize, undefined, wait);
  const images = await listAll<{ id: string } & Record<string, unknown>>(cloud, 'images', o.pageSize, undefined, wait);
  const flavors = (await retryThrottled(() => cloud.listFlavors(), wait)) as unknown as Record<string, unknown>[];
  const availabilityZones = (await retryThrottled(() => cloud.listAvailabilityZones(), wait)).map((z) => z.zoneName);
  return { projectId: cloud.projectId, servers, volumes, ports, subnets, images, flavors, availabilityZones };
}
