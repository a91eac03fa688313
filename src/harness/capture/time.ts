/** Times in a bundle: RFC 3339 with milliseconds (the replay's clock starts at the exact instant). */
export function rfc3339Ms(ms: number): string {
  return new Date(ms).toISOString();
}

/** The instant a bundle's capturedAt names (ms since epoch). */
export function parseInstant(s: string): number {
  return Date.parse(s);
}
