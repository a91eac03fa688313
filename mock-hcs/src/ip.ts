/** IPv4 helpers for CIDR membership and allocation. */
export function ipToInt(ip: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  let n = 0;
  for (let i = 1; i <= 4; i++) {
    const o = Number(m[i]);
    if (o > 255 || (m[i]!.length > 1 && m[i]!.startsWith('0'))) return undefined;
    n = n * 256 + o;
  }
  return n;
}

export function intToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

export interface Cidr {
  base: number;
  prefix: number;
  /** First and last address (network and broadcast). */
  first: number;
  last: number;
}

export function parseCidr(cidr: string): Cidr {
  const [addr, p] = cidr.split('/');
  const base = ipToInt(addr ?? '');
  const prefix = Number(p);
  if (base === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > 32) {
    throw new Error(`invalid CIDR "${cidr}"`);
  }
  const size = 2 ** (32 - prefix);
  const first = Math.floor(base / size) * size;
  return { base, prefix, first, last: first + size - 1 };
}

/** True when `ip` is a usable host address of `cidr` (not network or broadcast). */
export function isHostInCidr(ip: number, c: Cidr): boolean {
  if (c.prefix >= 31) return ip >= c.first && ip <= c.last;
  return ip > c.first && ip < c.last;
}
