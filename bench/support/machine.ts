/**
 * What the machine itself gives two processes: the speed-up of a plain CPU
 * loop (no allocation, no I/O) run in two processes at once over one alone.
 * On a machine whose two vCPUs share a physical core, or whose host is busy,
 * this is well under 2×, and no program's parallel speed-up measured at that
 * moment can be expected above it. Printed beside the parallel figures.
 */
import { spawn } from 'node:child_process';

const LOOP = `let x = 0; const a = new Float64Array(1 << 12); const t0 = performance.now();
for (let i = 0; i < 2e8; i++) x += a[i & 4095] + (i % 7);
process.stdout.write(String(performance.now() - t0 + (x < 0 ? 1 : 0)));`;

function loop(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', LOOP], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', () => resolve(Number(out)));
  });
}

/** One loop alone, then two at once: work per second with two over work per second with one. */
export async function plainLoopSpeedup(): Promise<number> {
  const one = await loop();
  const two = await Promise.all([loop(), loop()]);
  return (2 * one) / Math.max(...two);
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
