/**
 * The HCS project as the documented list calls show it, paged by marker the
 * way the official SDKs page (huaweicloudsdkecs ListServersDetailsRequest,
 * huaweicloudsdkevs ListVolumesRequest, huaweicloudsdkvpc ListPortsRequest /
 * ListSubnetsRequest, huaweicloudsdkims ListImagesRequest: `limit` and
 * `marker` = the id of the last item of the previous page). A page shorter
 * than the limit ends the list. No mock-hcs /_admin call, nothing a real HCS
 * does not answer.
 */
import type { HcsClient, PagedList } from '../../product/cloud/index.js';
import type { BundleCloud, BundleServer, BundleVolume } from './bundle.js';
import type { Redactor } from './redact.js';

/** Largest page each API takes (ECS and EVS 1000, VPC 2000, IMS 1000). */
const MAX_PAGE: Record<PagedList, number> = { servers: 1000, volumes: 1000, ports: 2000, subnets: 2000, images: 1000 };

/** Every item of a list call, page by page (at most `maxPages` pages: a cloud that never ends its list is an error). */
export async function listAll<T extends { id: string }>(cloud: HcsClient, what: PagedList, pageSize?: number, maxPages = 100_000): Promise<T[]> {
  const max = MAX_PAGE[what];
  const limit = Math.min(pageSize ?? max, max);
  const out: T[] = [];
  const seen = new Set<string>();
  let marker: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    // The list's items as the caller types them (listPage checks only that each has an id).
    const items = (await cloud.listPage(what, { limit, ...(marker ? { marker } : {}) })) as T[];
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
}

const USER_DATA = 'OS-EXT-SRV-ATTR:user_data';
/** Where a server's user data goes in the bundle: decoded, its private keys and tokens cut (redact.ts). */
export const USER_DATA_REDACTED = 'user_data_redacted';

export async function listCloud(cloud: HcsClient, red: Redactor, o: ListCloudOptions = {}): Promise<BundleCloud> {
  const servers = (await listAll<BundleServer>(cloud, 'servers', o.pageSize)).map((s) => {
    const c: BundleServer = { ...s };
    const ud = c[USER_DATA];
    delete c[USER_DATA];
    if (typeof ud === 'string' && ud !== '') c[USER_DATA_REDACTED] = red.userData(Buffer.from(ud, 'base64').toString('utf8'), `server ${s.name} (${s.id})`);
    return red.strings(c, `server ${s.name}`);
  });
  const volumes = (await listAll<BundleVolume>(cloud, 'volumes', o.pageSize)).map((v) => red.strings(v, `volume ${v.name}`));
  const ports = await listAll<{ id: string } & Record<string, unknown>>(cloud, 'ports', o.pageSize);
  const subnets = await listAll<{ id: string } & Record<string, unknown>>(cloud, 'subnets', o.pageSize);
  const images = await listAll<{ id: string } & Record<string, unknown>>(cloud, 'images', o.pageSize);
  const flavors = (await cloud.listFlavors()) as unknown as Record<string, unknown>[];
  const availabilityZones = (await cloud.listAvailabilityZones()).map((z) => z.zoneName);
  return { projectId: cloud.projectId, servers, volumes, ports, subnets, images, flavors, availabilityZones };
}
