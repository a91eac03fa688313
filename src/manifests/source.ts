import { readFileSync } from 'node:fs';
import { LineCounter, parseAllDocuments, parseDocument, isMap, isSeq, type Document, type Node as YamlNode } from 'yaml';
import { InputError } from '../core/errors.js';

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
  constructor(
    readonly file: string,
    readonly doc: Document,
    private readonly lines: LineCounter,
    /** Line offset of this document inside a multi-document file. */
  ) {}

  value(): unknown {
    return this.doc.toJS({ maxAliasCount: 100 });
  }

  /** 1-based line of the value at `path` (or of the nearest parent that exists). */
  lineOf(path: FieldPath): number {
    for (let n = path.length; n >= 0; n--) {
      const node = this.doc.getIn(path.slice(0, n), true) as YamlNode | undefined;
      if (node && typeof node === 'object' && 'range' in node && node.range) return this.lines.linePos(node.range[0]).line;
      // Keys of maps: point at the key when the value is null.
      if (n > 0) {
        const parent = this.doc.getIn(path.slice(0, n - 1), true);
        if (isMap(parent)) {
          const pair = parent.items.find((it) => (it.key as { value?: unknown } | null)?.value === path[n - 1]);
          const k = pair?.key as YamlNode | undefined;
          if (k?.range) return this.lines.linePos(k.range[0]).line;
        }
      }
    }
    return 1;
  }

  error(path: FieldPath, reason: string): InputError {
    return new InputError(reason, this.file, this.lineOf(path), formatPath(path) || undefined);
  }
}

function yamlError(file: string, e: { message: string; linePos?: [{ line: number; col: number }, ...unknown[]] }): InputError {
  const first = e.message.split('\n')[0] ?? e.message;
  return new InputError(`invalid YAML: ${first.replace(/ at line \d+, column \d+:?$/, '')}`, file, e.linePos?.[0].line);
}

export function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError(code === 'ENOENT' ? 'file not found' : `cannot read file (${code ?? String(e)})`, file);
  }
}

/** Parse one YAML document (a scenario file). */
export function parseYamlFile(file: string, text = readText(file)): SourceDoc {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) throw yamlError(file, doc.errors[0]!);
  return new SourceDoc(file, doc, lines);
}

/** Parse every document of a multi-document YAML file (manifests). Empty documents are skipped. */
export function parseYamlDocuments(file: string, text = readText(file)): SourceDoc[] {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [docs];
  const out: SourceDoc[] = [];
  for (const d of list) {
    if (d.errors.length) throw yamlError(file, d.errors[0]!);
    if (d.contents === null) continue;
    out.push(new SourceDoc(file, d, lines));
  }
  return out;
}

export { isMap, isSeq };
