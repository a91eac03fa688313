/**
 * YAML for cloud-init user data and the kubeadm files inside it.
 *
 * The user data is read on the node by cloud-init, that is by PyYAML (YAML
 * 1.1), and in the testbed by the guest (src/world/guest/cloudinit.ts) and the tests.
 * Both hot paths (one injectCloudInit per server creation, one guest parse per
 * boot) use js-yaml on plain JS values, several times faster than the `yaml`
 * package's document model, with two schemas:
 * - loading: the YAML 1.2 core schema, each plain scalar resolved exactly as
 *   the `yaml` package resolves it (regular expressions of its core schema):
 *   plain 0644 is the int 644, 0o14 and 0x1F are ints, 1e3 a float; "0644"
 *   quoted, on, yes, 1_000, 0b101, 12:30 and timestamps stay strings; `<<` is
 *   an ordinary key; a tag the schema does not know (e.g. !!binary) is an
 *   error rather than a silently different value;
 * - dumping: a plain, unambiguous #cloud-config: block style, keys in
 *   insertion order, multi-line strings (PEM, JSON, kubeadm files) as literal
 *   block scalars a person can read, and every single-line string that a
 *   YAML 1.2 reader or PyYAML's YAML 1.1 resolver would take for something
 *   other than a string (yes/no/on/off, 0644 octal, 1_000, 12:30, 2001-12-14,
 *   <<, =, null, 1.5, ...) double-quoted, so the node reads what we meant.
 */
import { dump, FAILSAFE_SCHEMA, load, loadAll, Type, YAMLException, type DumpOptions, type LoadOptions } from 'js-yaml';
import { checkYamlSize, YAML_MAX_DEPTH, YamlInputError } from './yaml-limits.js';

const CORE_NULL = /^(?:~|[Nn]ull|NULL)?$/;
const CORE_BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const CORE_INT = /^[-+]?[0-9]+$/;
const CORE_INT_OCT = /^0o[0-7]+$/;
const CORE_INT_HEX = /^0x[0-9a-fA-F]+$/;
const CORE_FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;
const CORE_FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const CORE_FLOAT_SPECIAL = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;

/**
 * The first characters the core patterns above can match (js-yaml tries every
 * implicit type on every plain scalar: most scalars, names and paths, are
 * ruled out by one lookup instead of up to eight regular expressions).
 */
const codes = (chars: string): Set<number> => new Set([...chars].map((c) => c.charCodeAt(0)));
const NULL_FIRST = codes('~nN');
const BOOL_FIRST = codes('tTfF');
const NUMBER_FIRST = codes('-+.0123456789');

/** The implicit resolvers of PyYAML (resolver.py, YAML 1.1): bool (with the y/n of the 1.1 spec), float, int, merge, null, timestamp, value. */
const YAML11_NON_STRING = [
  /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/,
  /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/,
  /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/,
  /^(?:<<|=|~|null|Null|NULL|)$/,
  /^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$/,
];

/** The first character of every non-empty match above: most strings (paths, names, PEM) are ruled out with one test. */
const YAML11_FIRST = /^[-+.0-9<=~yYnNtTfFoO]/;

const isInt = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && !Object.is(v, -0);

// js-yaml passes a plain scalar's text to resolve/construct, or null for an empty node with an explicit tag.
const coreNull = new Type('tag:yaml.org,2002:null', {
  kind: 'scalar',
  resolve: (s: string | null) => s === null || s === '' || (NULL_FIRST.has(s.charCodeAt(0)) && CORE_NULL.test(s)),
  construct: () => null,
  predicate: (v: unknown) => v === null,
  represent: () => 'null',
});
const coreBool = new Type('tag:yaml.org,2002:bool', {
  kind: 'scalar',
  resolve: (s: string | null) => s !== null && BOOL_FIRST.has(s.charCodeAt(0)) && CORE_BOOL.test(s),
  construct: (s: string) => s[0] === 't' || s[0] === 'T',
  predicate: (v: unknown) => typeof v === 'boolean',
  represent: (v: unknown) => (v ? 'true' : 'false'),
});
const coreInt = new Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (s: string | null) => s !== null && NUMBER_FIRST.has(s.charCodeAt(0)) && (CORE_INT.test(s) || CORE_INT_OCT.test(s) || CORE_INT_HEX.test(s)),
  construct: (s: string) => (s[1] === 'o' ? parseInt(s.slice(2), 8) : s[1] === 'x' ? parseInt(s.slice(2), 16) : parseInt(s, 10)),
  predicate: isInt,
  represent: (v: unknown) => String(v),
});
const coreFloat = new Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (s: string | null) => s !== null && NUMBER_FIRST.has(s.charCodeAt(0)) && (CORE_FLOAT.test(s) || CORE_FLOAT_EXP.test(s) || CORE_FLOAT_SPECIAL.test(s)),
  construct: (s: string) => (CORE_FLOAT_SPECIAL.test(s) ? (s.slice(-3).toLowerCase() === 'nan' ? NaN : s[0] === '-' ? -Infinity : Infinity) : parseFloat(s)),
  predicate: (v: unknown) => typeof v === 'number' && !isInt(v),
  represent: (v: unknown) => {
    const n = v as number;
    return Number.isNaN(n) ? '.nan' : n === Infinity ? '.inf' : n === -Infinity ? '-.inf' : Object.is(n, -0) ? '-0.0' : String(n);
  },
});
/** Never represents a value (no predicate): js-yaml's dumper quotes every string some implicit type resolves. */
const yaml11NonString = new Type('tag:yaml.org,2002:x-yaml11-non-string', {
  kind: 'scalar',
  resolve: (s: string | null) => s !== null && (s === '' || YAML11_FIRST.test(s)) && YAML11_NON_STRING.some((re) => re.test(s)),
});

const LOAD_SCHEMA = FAILSAFE_SCHEMA.extend({ implicit: [coreNull, coreBool, coreInt, coreFloat] });
const DUMP_SCHEMA = LOAD_SCHEMA.extend({ implicit: [yaml11NonString] });
// maxDepth is js-yaml's default, stated so that it stays the limit of src/core/yaml-limits.ts (its type definitions lack the option).
const LOAD_OPTIONS: LoadOptions = { schema: LOAD_SCHEMA, maxDepth: YAML_MAX_DEPTH } as LoadOptions;
// noRefs stays false: an object the input shares through an alias is written once with an anchor (as `yaml` does),
// never expanded (an alias bomb stays small); values built here are never shared, so they get no anchors.
const DUMP_OPTIONS: DumpOptions = { schema: DUMP_SCHEMA, lineWidth: -1, quotingType: '"', skipInvalid: true };

/*
 * Limits (src/core/yaml-limits.ts): the size and depth limits apply here too.
 * The alias limit does not: js-yaml returns an alias as the very object of its
 * anchor (as PyYAML does on the node), nothing here expands it, and dumpYaml
 * writes shared objects back as anchors, so an alias bomb stays as small as
 * its text (test/provider/cloudinit-roundtrip.test.ts), and ECS caps user data
 * at 32 KB (mock-hcs/src/services/ecs.ts).
 */

/** One YAML document, loaded with the schema above. Throws on invalid YAML and over the size and depth limits (see yamlErrorMessage). */
export function loadYaml(text: string): unknown {
  checkYamlSize(text);
  return load(text, LOAD_OPTIONS);
}

/** Every document of a YAML stream, loaded with the schema above, within the same limits. */
export function loadAllYaml(text: string): unknown[] {
  checkYamlSize(text);
  return loadAll(text, null, LOAD_OPTIONS);
}

/** A value as a block-style YAML document (no `---`), unambiguous to YAML 1.1 and 1.2 readers. */
export function dumpYaml(value: unknown): string {
  return dump(value, DUMP_OPTIONS);
}

/** The reason of a YAML error and where it is, on one line. */
export function yamlErrorMessage(e: unknown): string {
  if (e instanceof YamlInputError) return e.message;
  if (e instanceof YAMLException) return e.mark ? `${e.reason} at line ${e.mark.line + 1}, column ${e.mark.column + 1}` : e.reason;
  return e instanceof Error ? e.message : String(e);
}
