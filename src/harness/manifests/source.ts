import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { isAlias, isMap, isScalar, isSeq, type Document, type LineCounter, type Node as YamlNode, type Pair, type YAMLMap } from 'yaml';
import { InputError } from '../../core/errors.js';
import { checkYamlSize, parseYamlLimited, sizeLimitReason, YAML_MAX_BYTES, YamlInputError, yamlValue } from '../../core/yaml-limits.js';

/** A path into a YAML document: keys and indexes, e.g. ['steps', 3, 'wait', 'timeout']. */
export type FieldPath = (string | number)[];

export function formatPath(path: FieldPath): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${p}` : p;
  return out;
}

/**
 * A parsed YAML document that remembers where each value came from, so that
 * every error can name the file, the line and the field.
 */
export class SourceDoc {
  /** Per mapping, its pairs by scalar key: lineOf is one lookup per path step, whatever the mapping's size. */
  private readonly pairIndex = new WeakMap<YAMLMap, Map<unknown, Pair>>();

  constructor(
    readonly file: string,
    readonly doc: Document.Parsed,
    private readonly lines: LineCounter,
  ) {}

  value(): unknown {
    return yamlValue(this.doc);
  }

  private pairOf(map: YAMLMap, key: string | number): Pair | undefined {
    let index = this.pairIndex.get(map);
    if (!index) {
      index = new Map();
      for (const pair of map.items) {
        const k = isScalar(pair.key) ? pair.key.value : pair.key;
        if (!index.has(k)) index.set(k, pair);
      }
      this.pairIndex.set(map, index);
    }
    return index.get(key) ?? (typeof key === 'number' ? index.get(String(key)) : undefined);
  }

  /** 1-based line of the value at `path` (or of its key when the value is null, or of the nearest parent that exists). */
  lineOf(path: FieldPath): number {
    let node: unknown = this.doc.contents;
    let line = node && (node as YamlNode).range ? this.lines.linePos((node as YamlNode).range![0]).line : 1;
    for (const step of path) {
      if (isAlias(node)) node = node.resolve(this.doc);
      let next: unknown;
      if (isMap(node)) {
        const pair = this.pairOf(node, step);
        if (!pair) break;
        const k = pair.key as YamlNode | null;
        const v = pair.value as YamlNode | null;
        const at = v?.range ?? k?.range;
        if (at) line = this.lines.linePos(at[0]).line;
        next = v;
      } else if (isSeq(node) && typeof step === 'number') {
        next = node.items[step];
        const at = (next as YamlNode | undefined)?.range;
        if (!at) break;
        line = this.lines.linePos(at[0]).line;
      } else break;
      node = next;
    }
    return line;
  }

  error(path: FieldPath, reason: string): InputError {
    return new InputError(reason, this.file, this.lineOf(path), formatPath(path) || undefined);
  }
}

function yamlError(file: string, e: unknown): InputError {
  if (e instanceof YamlInputError) return new InputError(e.reason.startsWith('YAML') ? e.reason : `invalid YAML: ${e.reason}`, file, e.line, undefined, e.col);
  // The parser itself failing (a bug, or input it cannot handle) is still bad input of this file, never a crash.
  return new InputError(`invalid YAML: ${e instanceof Error ? e.message : String(e)}`, file);
}

/** The text of a YAML input file; a file over the size limit is refused before it is read in full. */
export function readText(file: string): string {
  try {
    const st = statSync(file);
    if (st.isFile() && st.size > YAML_MAX_BYTES) {
      // Read just past the limit: enough to name the line where it is crossed.
      const fd = openSync(file, 'r');
      try {
        const head = Buffer.alloc(YAML_MAX_BYTES + 1);
        const n = readSync(fd, head, 0, head.length, 0);
        try {
          checkYamlSize(head.subarray(0, n).toString('utf8'));
        } catch (e) {
          if (e instanceof YamlInputError) throw new InputError(sizeLimitReason(st.size), file, e.line, undefined, e.col);
          throw e;
        }
      } finally {
        closeSync(fd);
      }
      throw new InputError(sizeLimitReason(st.size), file);
    }
    return readFileSync(file, 'utf8');
  } catch (e) {
    if (e instanceof InputError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError(code === 'ENOENT' ? 'file not found' : `cannot read file (${code ?? String(e)})`, file);
  }
}

/**
 * Parsed files by path, while their text is the same: the library's shared
 * manifests are read by validate and again by every step that applies them,
 * in every scenario of a run. The documents are never changed (values are
 * built anew by toJS, lines looked up read-only), so one parse serves all.
 */
const parsed = new Map<string, { text: string; result: { docs: Document.Parsed[]; lines: LineCounter } }>();
const CACHE_FILES = 256;
const CACHE_MAX_TEXT = 1024 * 1024;

function parse(file: string, text: string, multi: boolean): { docs: Document.Parsed[]; lines: LineCounter } {
  const key = `${multi ? 'all' : 'one'}\0${file}`;
  const hit = parsed.get(key);
  if (hit && hit.text === text) return hit.result;
  let result;
  try {
    result = parseYamlLimited(text, multi);
  } catch (e) {
    throw yamlError(file, e);
  }
  if (text.length <= CACHE_MAX_TEXT) {
    if (parsed.size >= CACHE_FILES) parsed.delete(parsed.keys().next().value!);
    parsed.set(key, { text, result });
  }
  return result;
}

/** Parse one YAML document (a scenario file), within the limits of src/core/yaml-limits.ts. */
export function parseYamlFile(file: string, text = readText(file)): SourceDoc {
  const { docs, lines } = parse(file, text, false);
  return new SourceDoc(file, docs[0]!, lines);
}

/** Parse every document of a multi-document YAML file (manifests). Empty documents are skipped. */
export function parseYamlDocuments(file: string, text = readText(file)): SourceDoc[] {
  const { docs, lines } = parse(file, text, true);
  // `---` followed by nothing (or by `---`) is an empty document: a null scalar with no source.
  const empty = (d: Document.Parsed): boolean => d.contents === null || (isScalar(d.contents) && d.contents.value === null && !d.contents.source);
  return docs.filter((d) => !empty(d)).map((d) => new SourceDoc(file, d, lines));
}

export { isMap, isSeq };
