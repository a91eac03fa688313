/**
 * IAM (Keystone v3): tokens and projects. Paths as in the IAM API reference
 * and @huaweicloud/huaweicloud-sdk-iam v3 IamClient. Issuing a token needs no
 * AK/SK: the password (or a token) in the body authenticates.
 */
import { defineOperations } from './operation.js';

export const IAM = defineOperations('iam', {
  createToken: { sdk: 'KeystoneCreateUserTokenByPassword', method: 'POST', path: '/v3/auth/tokens' },
  listProjects: { sdk: 'KeystoneListProjects', method: 'GET', path: '/v3/projects' },
  listAuthDomains: { sdk: 'KeystoneListAuthDomains', method: 'GET', path: '/v3/auth/domains' },
  listAuthProjects: { sdk: 'KeystoneListAuthProjects', method: 'GET', path: '/v3/auth/projects' },
});

/** IAM project (Keystone ProjectResult; KeystoneListProjects' `projects[]`). */
export interface Project {
  id: string;
  name: string;
  domain_id: string;
  parent_id?: string;
  enabled: boolean;
  is_domain?: boolean;
  description?: string;
  [k: string]: unknown;
}

/** KeystoneCreateUserTokenByPassword request body. */
export interface PasswordTokenBody {
  auth: {
    identity: { methods: ['password']; password: { user: { name: string; password: string; domain: { name: string } } } };
    scope?: { project: { id: string } | { name: string } };
  };
}

/** The body of a token answer (the token itself is the X-Subject-Token header). */
export interface TokenBody {
  token: {
    expires_at: string;
    issued_at: string;
    methods: string[];
    user: { id: string; name: string; domain: { id: string; name: string } };
    project?: { id: string; name: string; domain: { id: string; name: string } };
    domain?: { id: string; name: string };
    catalog?: unknown[];
    [k: string]: unknown;
  };
}
