/**
 * Read-only listing by marker: one page of a documented list call, paged as
 * the official SDKs page them (the request's `marker` is the id of the last
 * item of the previous page; a page shorter than `limit` is the last). ECS
 * ListServersDetails, EVS ListVolumes, VPC ListPorts and ListSubnets, IMS
 * ListImages. Used by `hcs-testbed capture` (src/harness/capture/cloud.ts).
 */
import { ECS, EVS, IMS, VPC, queryString } from '../../core/hcs/index.js';
import { HcsApiError, type HcsCaller } from './caller.js';

/** The list calls listPage pages by marker: the catalogued operation and the response's list key. */
export const PAGED_LISTS = {
  servers: { op: ECS.listServers, key: 'servers' },
  volumes: { op: EVS.listVolumes, key: 'volumes' },
  ports: { op: VPC.listPorts, key: 'ports' },
  subnets: { op: VPC.listSubnets, key: 'subnets' },
  images: { op: IMS.listImages, key: 'images' },
} as const;
export type PagedList = keyof typeof PAGED_LISTS;

export const pagingCalls = {
  async listPage(this: HcsCaller, what: PagedList, q: { limit: number; marker?: string }): Promise<{ id: string }[]> {
    const api = PAGED_LISTS[what];
    const r = await this.call<Record<string, { id: string }[] | undefined>>(api.op, {}, { query: queryString({ limit: q.limit, marker: q.marker }) });
    const items = r[api.key];
    if (!Array.isArray(items)) throw new HcsApiError(200, 'InvalidResponse', `the response has no "${api.key}" list`, api.op.sdk);
    return items;
  },
};
