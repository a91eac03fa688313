/** IAM calls of the HCS client: projects (token issue is issueToken in client.ts: it needs no credentials). */
import { IAM, queryString, type Project } from '../../core/hcs/index.js';
import type { HcsCaller } from './caller.js';

export const iamCalls = {
  /** Projects of the credentials' account (GET /v3/projects), optionally by exact name. */
  async listProjects(this: HcsCaller, q: { name?: string } = {}): Promise<Project[]> {
    return (await this.call<{ projects: Project[] }>(IAM.listProjects, {}, { query: queryString({ name: q.name }) })).projects;
  },
};
