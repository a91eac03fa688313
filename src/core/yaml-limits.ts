/**
 * Limits on YAML input, and the `yaml` package's document model parsed
 * within them (scenario files, manifests, mock-hcs --config, kubeconfigs).
 *
 * Without them a 10 MB file exhausted the heap, a deeply nested flow
 * collection overflowed the stack, and an alias bomb ("billion laughs": each
 * anchor a list of nine aliases of the previous one) failed deep inside
 * `toJS` with an error naming neither file nor line. Every limit is checked
 * before the value is built and reported with the line and column where it
 * is crossed (YamlLimitError), so callers turn it into `file:line:col` and
 * exit 2 like any other bad input.
 *
 * The numbers (documented in docs/scenarios.md, "Limits of YAML input"):
 * - size: 4 MiB per file. The Kubernetes API server refuses request bodies
 *   over 3 MiB (apiserver's MaxRequestBodyBytes) and etcd objects over
 *   1.5 MiB, so one manifest object never needs more; a file of many objects
 *   or a mapping of 80,000 keys (~1.5 MB) still fits.
 * - depth: 100 nested collections, js-yaml's own default (`maxDepth`).
 *   Kubernetes objects nest 15–20 levels deep. Size and depth also bound the
 *   cloud-init loader (js-yaml, src/core/yaml.ts), where aliases stay shared
 *   objects and need no limit.
 * - aliases: together they may stand for at most 10,000 nodes (an alias
 *   counts as every node of what it refers to), and an alias may not refer to
 *   a collection that contains it. Shared blocks (`<<: *defaults`, a repeated
 *   list) stay far below; a billion-laughs document of 9 levels stands for
 *   387 million.
 *
 * Duplicate keys are found here with one hash set per mapping: the `yaml`
 * package's `uniqueKeys` compares each new key with every earlier one
 * (compose/util-map-includes.js), which made a mapping of 80,000 keys take
 * 46 s to parse.
 */
import { Composer, type CST, isAlias, isMap, isPair, isScalar, isSeq, LineCounter, Parser, type Document, type Node as YamlNode } from 'yaml';

export const YAML_MAX_BYTES = 4 * 1024 * 1024;
export const YAML_MAX_DEPTH = 100;
export const YAML_MAX_ALIAS_NODES = 10_000;

/** A YAML input refused: invalid, or over one of the limits. line and col are 1-based. */
export class YamlInputError extends Error {
  constructor(
    readonly reason: string,
    readonly line?: number,
    readonly col?: number,
  ) {
    super(line ? `${reason} (line ${line}, column ${col ?? 1})` : reason);
    this.name = 'YamlInputError';
  }
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** The size limit's message for input of `bytes` bytes (also used by readers that stat a file before reading it). */
export function sizeLimitReason(bytes: number): string {
  return `YAML input is ${mib(bytes)} (${bytes} bytes), over the size limit of ${YAML_MAX_BYTES / (1024 * 1024)} MiB`;
}

/** 1-based line and column of a string offset. */
function positionOf(lines: LineCounter, offset: number): { line: number; col: number } {
  return lines.linePos(offset);
}

/** Throws when `text` is over the size limit, naming the line and column where the limit is crossed. */
export function checkYamlSize(text: string): void {
  if (text.length * 3 <= YAML_MAX_BYTES) return; // at most 3 UTF-8 bytes per UTF-16 code unit
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= YAML_MAX_BYTES) return;
  // The line and column of the first character past the limit.
  let line = 1;
  let lineStart = 0;
  let total = 0;
  let i = 0;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    total += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c < 0xdc00 ? 4 : c >= 0xdc00 && c < 0xe000 ? 0 : 3;
    if (total > YAML_MAX_BYTES) break;
    if (c === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  throw new YamlInputError(sizeLimitReason(bytes), line, i - lineStart + 1);
}

/** The collections of a CST token (keys and values of its items). */
type Token = CST.Token;

function cstChildren(t: Token): Token[] {
  if (t.type === 'document') return t.value ? [t.value] : [];
  if (t.type === 'block-map' || t.type === 'block-seq' || t.type === 'flow-collection') {
    const out: Token[] = [];
    for (const it of t.items as { key?: Token | null; value?: Token }[]) {
      if (it.key) out.push(it.key);
      if (it.value) out.push(it.value);
    }
    return out;
  }
  return [];
}

/**
 * The depth limit on the concrete syntax tree, before the composer (which
 * recurses once per level) builds nodes from it. Iterative: any depth is
 * looked at without growing the stack.
 */
function checkCstDepth(tokens: Token[], lines: LineCounter): void {
  const stack: { t: Token; depth: number }[] = tokens.map((t) => ({ t, depth: 0 }));
  while (stack.length) {
    const { t, depth } = stack.pop()!;
    const isColl = t.type === 'block-map' || t.type === 'block-seq' || t.type === 'flow-collection';
    const d = isColl ? depth + 1 : depth;
    if (d > YAML_MAX_DEPTH) {
      const p = positionOf(lines, t.offset);
      throw new YamlInputError(`YAML nests deeper than the depth limit of ${YAML_MAX_DEPTH} levels`, p.line, p.col);
    }
    for (const c of cstChildren(t)) stack.push({ t: c, depth: d });
  }
}

interface Measure {
  /** Nodes this one stands for, aliases expanded. */
  size: number;
  /** Levels of collections at and below it, aliases expanded. */
  height: number;
}

/**
 * Duplicate keys, the depth limit (aliases expanded) and the alias limit on
 * a composed document, in one walk. Anchors precede their aliases in
 * document order, so each node is measured once and an alias reuses the
 * measure of its target.
 */
function checkDocument(doc: Document.Parsed, lines: LineCounter): void {
  const measured = new Map<YamlNode, Measure>();
  const open = new Set<YamlNode>();
  let aliasNodes = 0;
  const fail = (node: { range?: readonly number[] | null } | null | undefined, reason: string): never => {
    const p = node?.range ? positionOf(lines, node.range[0]!) : undefined;
    throw new YamlInputError(reason, p?.line, p?.col);
  };
  const visit = (node: unknown, depth: number): Measure => {
    if (isAlias(node)) {
      const target = node.resolve(doc);
      if (!target) fail(node, `unknown alias *${node.source}`);
      if (open.has(target!)) fail(node, `alias *${node.source} refers to a collection that contains it`);
      const m = measured.get(target!) ?? visit(target, depth);
      aliasNodes += m.size;
      if (aliasNodes > YAML_MAX_ALIAS_NODES) {
        fail(node, `YAML aliases stand for more than ${YAML_MAX_ALIAS_NODES} nodes (alias limit, billion-laughs protection); *${node.source} alone stands for ${m.size}`);
      }
      if (depth + m.height > YAML_MAX_DEPTH) fail(node, `YAML nests deeper than the depth limit of ${YAML_MAX_DEPTH} levels once alias *${node.source} is expanded`);
      return m;
    }
    if (!isMap(node) && !isSeq(node)) return { size: 1, height: 0 };
    const known = measured.get(node);
    if (known) return known;
    if (depth + 1 > YAML_MAX_DEPTH) fail(node, `YAML nests deeper than the depth limit of ${YAML_MAX_DEPTH} levels`);
    open.add(node);
    let size = 1;
    let height = 0;
    const add = (m: Measure): void => {
      size += m.size;
      if (m.height > height) height = m.height;
    };
    if (isMap(node)) {
      const seen = new Map<unknown, YamlNode>();
      for (const pair of node.items) {
        const key = pair.key;
        if (isScalar(key)) {
          const first = seen.get(key.value);
          if (first) {
            const p = first.range ? positionOf(lines, first.range[0]) : undefined;
            fail(key, `duplicate key ${JSON.stringify(key.value)} in a mapping${p ? ` (first at line ${p.line}, column ${p.col})` : ''}`);
          }
          seen.set(key.value, key);
        }
        if (key !== null && key !== undefined) add(visit(key, depth + 1));
        if (pair.value !== null && pair.value !== undefined) add(visit(pair.value, depth + 1));
      }
    } else {
      for (const item of node.items) {
        if (isPair(item)) {
          // A flow pair in a sequence (`[a: b]`) is a one-pair mapping.
          add({ size: 1, height: 0 });
          if (item.key) add(visit(item.key, depth + 2));
          if (item.value) add(visit(item.value, depth + 2));
        } else add(visit(item, depth + 1));
      }
    }
    open.delete(node);
    const m = { size, height: height + 1 };
    measured.set(node, m);
    return m;
  };
  visit(doc.contents, 0);
}

export interface ParsedYaml {
  docs: Document.Parsed[];
  lines: LineCounter;
}

function firstError(doc: Document.Parsed, lines: LineCounter): YamlInputError | undefined {
  const e = doc.errors[0];
  if (!e) return undefined;
  const p = positionOf(lines, e.pos[0]);
  const reason = (e.message.split('\n')[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, '');
  return new YamlInputError(reason, p.line, p.col);
}

/**
 * Parse YAML text within the limits: one document (`multi` false: more is an
 * error, as `yaml`'s parseDocument says) or a stream. Throws YamlInputError
 * for invalid YAML, a duplicate key or a limit; the documents' toJS is then
 * safe to call (`maxAliasCount: -1`: the alias limit was checked here).
 */
export function parseYamlLimited(text: string, multi: boolean): ParsedYaml {
  checkYamlSize(text);
  const lines = new LineCounter();
  const tokens = Array.from(new Parser(lines.addNewLine).parse(text));
  checkCstDepth(tokens, lines);
  const composer = new Composer({ uniqueKeys: false, prettyErrors: false });
  const docs: Document.Parsed[] = [];
  for (const d of composer.compose(tokens, !multi, text.length)) {
    if (!multi && docs.length === 1) {
      const p = positionOf(lines, d.range[0]);
      throw new YamlInputError('the file holds several YAML documents; one is expected', p.line, p.col);
    }
    docs.push(d);
  }
  for (const d of docs) {
    const err = firstError(d, lines);
    if (err) throw err;
    checkDocument(d, lines);
  }
  return { docs, lines };
}

/** The value of one document parsed by parseYamlLimited. */
export function yamlValue(doc: Document.Parsed): unknown {
  return doc.toJS({ maxAliasCount: -1 });
}

/** Parse one YAML document within the limits and return its value (mock-hcs --config, kubeconfigs). */
export function parseYamlValue(text: string): unknown {
  const { docs } = parseYamlLimited(text, false);
  return docs[0] ? yamlValue(docs[0]) : null;
}
