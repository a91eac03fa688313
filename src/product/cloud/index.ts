/** The provider's HCS client (ECS, EVS, VPC, IMS, IAM over signed or token-authenticated HTTP), one module per service. */
export { HcsClient, HcsApiError, issueToken, type HcsClientOptions, type IssuedToken } from './client.js';
export type { CallOptions, HcsCaller, PathParams } from './caller.js';
export type { ListServersQuery } from './ecs.js';
export type { ListPortsQuery } from './vpc.js';
export { PAGED_LISTS, type PagedList } from './paging.js';
export { signRequest, sdkDate, sdkUrlEncode } from './signer.js';
export { dispatchTransport, inProcessTransport, injectTransport, fetchTransport, type HcsTransport, type HttpRequest, type HttpResponse, type InProcessEndpoint } from './transport.js';
/** The wire types (request and response bodies) are the catalogue's: src/core/hcs. */
export type * from '../../core/hcs/index.js';
