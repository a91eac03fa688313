/** The provider's HCS client (ECS, EVS, VPC, IMS, IAM over signed or token-authenticated HTTP). */
export { HcsClient, HcsApiError, issueToken, PAGED_LISTS, type HcsClientOptions, type ListServersQuery, type PagedList } from './client.js';
export { signRequest, sdkDate, sdkUrlEncode } from './signer.js';
export { dispatchTransport, injectTransport, fetchTransport, type HcsTransport, type HttpRequest, type HttpResponse, type InProcessEndpoint } from './transport.js';
export type * from './types.js';
