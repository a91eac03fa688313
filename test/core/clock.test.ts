import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration, rfc3339, VirtualClock } from '../../src/core/clock.js';
import { SeededRng } from '../../src/core/rng.js';

describe('VirtualClock', () => {
  it('fires timers in due order, ties in creation order, and only when advanced', () => {
    const c = new VirtualClock(0);
    const fired: string[] = [];
    c.setTimer(200, () => fired.push('b'));
    c.setTimer(100, () => fired.push('a1'));
    c.setTimer(100, () => fired.push('a2'));
    expect(fired).toEqual([]);
    expect(c.nextDue()).toBe(100);
    c.advanceTo(150);
    expect(fired).toEqual(['a1', 'a2']);
    expect(c.now()).toBe(150);
    c.advanceBy(1000);
    expect(fired).toEqual(['a1', 'a2', 'b']);
    expect(c.nextDue()).toBeUndefined();
  });

  it('runs timers created by callbacks when they fall due within the advance', () => {
    const c = new VirtualClock(0);
    const at: number[] = [];
    c.setTimer(10, () => {
      at.push(c.now());
      c.setTimer(5, () => at.push(c.now()));
    });
    c.advanceTo(100);
    expect(at).toEqual([10, 15]);
  });

  it('cancelled timers never fire and time cannot go backwards', () => {
    const c = new VirtualClock(0);
    let n = 0;
    const id = c.setTimer(10, () => n++);
    c.clearTimer(id);
    c.advanceTo(20);
    expect(n).toBe(0);
    expect(() => c.advanceTo(5)).toThrow(/backwards/);
    expect(() => c.setTimer(-1, () => undefined)).toThrow(RangeError);
  });
});

describe('durations', () => {
  it('parses Go durations and rejects junk', () => {
    expect(parseDuration('1m')).toBe(60_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('0')).toBe(0);
    expect(() => parseDuration('5 minutes')).toThrow(/invalid duration/);
    expect(() => parseDuration('')).toThrow(/invalid duration/);
    expect(formatDuration(3_723_000)).toBe('1h2m3s');
  });
});

describe('SeededRng', () => {
  it('is deterministic per seed and differs across seeds', () => {
    const a = new SeededRng(42);
    const b = new SeededRng(42);
    const c = new SeededRng(43);
    const seqA = Array.from({ length: 5 }, () => a.string(5));
    expect(Array.from({ length: 5 }, () => b.string(5))).toEqual(seqA);
    expect(Array.from({ length: 5 }, () => c.string(5))).not.toEqual(seqA);
    expect(new SeededRng(1).uuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new SeededRng(1).fork('x').next()).toBe(new SeededRng(1).fork('x').next());
    expect(new SeededRng(1).fork('x').next()).not.toBe(new SeededRng(1).fork('y').next());
  });
});

describe('rfc3339', () => {
  it('formats to the second whatever it formatted before (it remembers the last second)', () => {
    const direct = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
    // Same second twice, then neighbours, fractions and times before 1970 (Date truncates the milliseconds toward 0).
    const times = [1767225600000, 1767225600999, 1767225601000, 1767225600500, 0, -1, -0.5, -1000, -1001, 999.9, 1000.2, -999.9, 253402300799999, 253402300800000, 1767225600000];
    for (const ms of times) expect(rfc3339(ms), String(ms)).toBe(direct(ms));
    expect(rfc3339(-0.5)).toBe('1970-01-01T00:00:00Z');
    expect(rfc3339(-1)).toBe('1969-12-31T23:59:59Z');
    expect(() => rfc3339(Number.NaN)).toThrow(RangeError);
    expect(() => rfc3339(8.64e15 + 1)).toThrow(RangeError);
    expect(rfc3339(1767225600000)).toBe('2026-01-01T00:00:00Z');
  });
});
