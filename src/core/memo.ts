/**
 * A bounded cache for a pure function of one string: the same input gives the
 * same output, so caching never changes behaviour or determinism, only CPU.
 * Used where reconcilers re-derive the same text on every pass (the
 * kubeadm-config ClusterConfiguration: parsing and rendering its YAML was
 * ~5 % of the library's CPU, `docs/explore.md` "Performance").
 * The oldest entry goes first once `size` entries are held.
 */
export function memoByString<T>(fn: (input: string) => T, size = 64): (input: string) => T {
  const cache = new Map<string, T>();
  return (input: string): T => {
    if (cache.has(input)) return cache.get(input) as T;
    const out = fn(input);
    if (cache.size >= size) cache.delete(cache.keys().next().value as string);
    cache.set(input, out);
    return out;
  };
}
