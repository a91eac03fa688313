import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';

const DIR = 'scenarios';
const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml')).sort();

it.each(files)('%s', async (file) => {
  const s = loadScenario(join(DIR, file));
  const r = await runScenario(s, embeddedTestbedFactory());
  const failed = r.steps.find((x) => !x.ok);
  expect(failed?.error ?? '', `step ${failed?.index}: ${failed?.title}`).toBe('');
  expect(r.ok).toBe(true);
});
