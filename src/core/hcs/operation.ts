/**
 * The HCS operation catalogue: what the cloud and every client agree on for
 * one API call — its service, its name, its method and path, and whether it
 * answers a job. The provider's client (src/product/cloud) builds its
 * requests from these entries, mock-hcs registers its routes from them, and
 * mock-hcs's fault rules (HCS-6) name operations by them, so each call is
 * stated once (issue 33, "one source per fact"; docs/architecture.md, "Adding a cloud call").
 */

export type HcsService = 'ecs' | 'evs' | 'vpc' | 'ims' | 'iam';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One entry as a service file declares it (the catalogue adds `service` and `name`). */
export interface OperationSpec {
  /**
   * The operation's name in the official SDKs and the API reference (e.g.
   * "CreateServers", "NovaListAvailabilityZones"); the client's errors name
   * the failed call by it.
   */
  readonly sdk: string;
  readonly method: HttpMethod;
  /** Path template, parameters in braces: "/v1/{project_id}/cloudservers/{server_id}". Clients call this one. */
  readonly path: string;
  /** Older paths the cloud still serves for the same operation (e.g. "/v1/{project_id}/cloudservers" beside v1.1). */
  readonly aliases?: readonly string[];
  /**
   * The call answers a job id and its change happens in that job (a timed
   * transition of the resource). Fault effects that act on the job (jobFail,
   * stuck, timeout, latency `job`) apply only to these.
   */
  readonly job?: boolean;
  /**
   * Several operations share one method and path (POST .../cloudservers/action):
   * the top-level key of the request body that picks this one ("os-stop").
   */
  readonly bodyKey?: string;
}

export interface HcsOperation extends OperationSpec {
  readonly service: HcsService;
  /** The catalogue key, lower camel case like the SDK clients' methods ("createServers"); fault rules use it. */
  readonly name: string;
}

/** The parameter names of a path template: ParamsOf<"/v1/{project_id}/x/{id}"> = "project_id" | "id". */
export type ParamsOf<P extends string> = P extends `${string}{${infer K}}${infer Rest}` ? K | ParamsOf<Rest> : never;

/** A service's catalogue: the entries keyed by name, in declaration order, each knowing its service and name. */
export type Operations<S extends HcsService, T extends Record<string, OperationSpec>> = { readonly [K in keyof T]: T[K] & { readonly service: S; readonly name: K & string } };

/** Declare a service's operations (the order is the order fault-rule listings show them in). */
export function defineOperations<S extends HcsService, const T extends Record<string, OperationSpec>>(service: S, specs: T): Operations<S, T> {
  const out: Record<string, HcsOperation> = {};
  for (const [name, spec] of Object.entries(specs)) out[name] = Object.freeze({ ...spec, service, name });
  return Object.freeze(out) as Operations<S, T>;
}

/**
 * Fill a path template: every `{name}` becomes the URI-encoded value of
 * `params[name]`. A missing parameter is an error (it would otherwise reach
 * the cloud as a literal "{name}").
 */
export function fillPath<P extends string>(template: P, params: Record<ParamsOf<P>, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_m, k: string) => {
    const v = (params as Record<string, string | undefined>)[k];
    if (v === undefined) throw new Error(`path ${template}: parameter ${k} is missing`);
    return encodeURIComponent(v);
  });
}

/** Every path of an operation: its own, then its aliases. */
export function pathsOf(op: OperationSpec): readonly string[] {
  return [op.path, ...(op.aliases ?? [])];
}

/** Query string from the defined values, in the given order ("" when none): "?a=1&b=x". */
export function queryString(params: Record<string, string | number | undefined>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}
