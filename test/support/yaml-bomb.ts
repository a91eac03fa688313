/**
 * The "billion laughs" YAML fixture the YAML-limit tests share: nine levels of
 * nine aliases each (9^9 nodes), as lines `a:` … `i:` at the given indent.
 */
export function aliasBomb(indent = ''): string {
  let out = `${indent}a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n`;
  let prev = 'a';
  for (const c of 'bcdefghi') {
    out += `${indent}${c}: &${c} [${Array(9).fill(`*${prev}`).join(', ')}]\n`;
    prev = c;
  }
  return out;
}
