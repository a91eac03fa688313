/**
 * Event ages in `kubectl describe` on virtual time (issue 34). kubectl
 * computes an Event's age on the client, from its timestamps and the
 * machine's own clock (kubectl describe: translateTimestampSince →
 * duration.HumanDuration, "<invalid>" for a time in the future). Once
 * virtual time runs ahead of the wall clock (every advance does), every
 * Event is "in the future" and describe prints `<invalid>`.
 *
 * The list describe asks for — the Events of one object, by
 * `fieldSelector=involvedObject.…,involvedObject.uid=…` — is answered here
 * with the Events' timestamps moved back by how far virtual time is ahead,
 * so that wall now − timestamp is the Event's age in virtual time, as
 * `kubectl get` (ages computed by the server, on virtual time) shows them.
 * Only while virtual time is ahead; any other request about Events (kubectl
 * get events, -o yaml, a watch) is served by the API as it is.
 */
import type { EmbeddedStore } from '../../core/kube/embedded-store.js';
import type { KubeObject } from '../../core/kube/types.js';

export const DESCRIBE_EVENTS_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/events$/;

/** The request kubectl describe makes for one object's Events. */
export function isDescribeEvents(method: string, path: string, query: URLSearchParams): string | undefined {
  if (method !== 'GET' || query.has('watch')) return undefined;
  const m = DESCRIBE_EVENTS_PATH.exec(path);
  if (!m || !/(^|,)involvedObject\.uid=/.test(query.get('fieldSelector') ?? '')) return undefined;
  return decodeURIComponent(m[1]!);
}

type Ev = KubeObject & { firstTimestamp?: string; lastTimestamp?: string; eventTime?: string; series?: { lastObservedTime?: string } };

/** `t` moved `ms` earlier: RFC 3339 in seconds (metav1.Time) or microseconds (metav1.MicroTime, eventTime). */
function back(t: string, ms: number, micro: boolean): string {
  const iso = new Date(Date.parse(t) - ms).toISOString();
  return micro ? iso.replace(/\.(\d{3})Z$/, '.$1000Z') : iso.replace(/\.\d{3}Z$/, 'Z');
}

/** The EventList describe gets: the object's Events, dated `aheadMs` earlier. */
export function describeEvents(mgmt: EmbeddedStore, namespace: string, fieldSelector: string, aheadMs: number): { kind: 'EventList'; apiVersion: 'v1'; metadata: { resourceVersion: string }; items: Ev[] } {
  const items = mgmt.listSharedSync<Ev>('Event', { namespace, fieldSelector }).map((e) => {
    const x: Ev = { ...e, apiVersion: 'v1', kind: 'Event' };
    for (const k of ['firstTimestamp', 'lastTimestamp'] as const) if (e[k]) x[k] = back(e[k], aheadMs, false);
    if (e.eventTime) x.eventTime = back(e.eventTime, aheadMs, true);
    if (e.series?.lastObservedTime) x.series = { ...e.series, lastObservedTime: back(e.series.lastObservedTime, aheadMs, true) };
    return x;
  });
  return { kind: 'EventList', apiVersion: 'v1', metadata: { resourceVersion: mgmt.resourceVersion() }, items };
}
