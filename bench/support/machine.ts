/**
 * What the machine itself gives two processes: the speed-up of a loop run in
 * two processes at once over one alone, for a plain arithmetic loop (no
 * allocation, no I/O) and for an allocating one (short-lived objects, strings
 * and a Map, as the simulation does: the garbage collector and the caches
 * are shared by the two vCPUs). On a machine whose two vCPUs share a physical
 * core, or whose host is busy, these are well under 2×, and a program's
 * parallel speed-up measured at that moment is bounded by them. Printed
 * beside the parallel figures.
 */
import { spawn } from 'node:child_process';

const PLAIN = `let x = 0; const a = new Float64Array(1 << 12); const t0 = performance.now();
for (let i = 0; i < 2e8; i++) x += a[i & 4095] + (i % 7);
process.stdout.write(String(performance.now() - t0 + (x < 0 ? 1 : 0)));`;

const ALLOCATING = `const t0 = performance.now(); let keep = []; const m = new Map();
for (let i = 0; i < 1.5e6; i++) { const o = { a: i, b: String(i), c: [i, i + 1] }; keep.push(o); if (keep.length > 50000) keep = []; m.set('k' + (i % 20000), o); }
process.stdout.write(String(performance.now() - t0 + (m.size < 0 ? 1 : 0)));`;

export type LoopKind = 'plain' | 'allocating';

function loop(kind: LoopKind): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--max-semi-space-size=64', '-e', kind === 'plain' ? PLAIN : ALLOCATING], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', () => resolve(Number(out)));
  });
}

/** One loop alone, then two at once: work per second with two over work per second with one. */
export async function loopSpeedup(kind: LoopKind): Promise<number> {
  const one = await loop(kind);
  const two = await Promise.all([loop(kind), loop(kind)]);
  return (2 * one) / Math.max(...two);
}

/** Both loops' speed-ups, printed as one note. */
export async function machineSpeedups(): Promise<{ plain: number; allocating: number }> {
  return { plain: await loopSpeedup('plain'), allocating: await loopSpeedup('allocating') };
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
