/**
 * Rewrite docs/provider.md's "Observable surface" table from src/harness/scenario/observables.ts
 * (`npx tsx tools/observables.ts`; test/scenario/observables.test.ts fails while they differ).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { observablesTable } from '../src/harness/scenario/observables.js';

const file = 'docs/provider.md';
const begin = '<!-- observables:begin (generated from src/harness/scenario/observables.ts) -->\n';
const end = '<!-- observables:end -->';
const doc = readFileSync(file, 'utf8');
const at = doc.indexOf(begin);
const to = doc.indexOf(end, at);
if (at < 0 || to < 0) throw new Error(`${file} lacks the markers ${begin.trim()} ... ${end}`);
writeFileSync(file, doc.slice(0, at + begin.length) + observablesTable() + doc.slice(to));
