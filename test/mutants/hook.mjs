// A module-loader hook (node:module register) for a mutant's worker process: the source text of each patched
// file is read from disk and changed as the mutant says (each `from` must occur exactly once) before tsx's
// loader, registered after this one and so running before it in the chain, transforms the TypeScript. The
// files on disk are never written: the product's code paths stay as they are (test/mutants/catalogue.ts).
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** file URL -> [{ from, to }] */
let patches = new Map();

export function initialize(data) {
  patches = new Map();
  for (const p of data?.patches ?? []) {
    const url = pathToFileURL(p.file).href;
    patches.set(url, [...(patches.get(url) ?? []), p]);
  }
}

/** Apply the replacements to `text`; a `from` that does not occur exactly once is an error naming the mutant's file. */
export function applyPatches(text, list, file) {
  let out = text;
  for (const p of list) {
    const at = out.indexOf(p.from);
    if (at < 0 || out.indexOf(p.from, at + 1) >= 0) throw new Error(`mutant patch of ${file}: the text to replace occurs ${at < 0 ? 'nowhere' : 'more than once'}: ${JSON.stringify(p.from.slice(0, 120))}`);
    out = out.slice(0, at) + p.to + out.slice(at + p.from.length);
  }
  return out;
}

export async function load(url, context, nextLoad) {
  const bare = url.split('?')[0];
  const list = patches.get(bare);
  const r = await nextLoad(url, context);
  if (!list) return r;
  const file = fileURLToPath(bare);
  return { ...r, source: applyPatches(readFileSync(file, 'utf8'), list, file) };
}
