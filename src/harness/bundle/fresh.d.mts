/** Types of fresh.mjs (plain JavaScript, read by bin/hcs-testbed.mjs before any TypeScript loader). */
export interface InputRecord {
  sha256: string;
  size: number;
  mtimeMs: number;
}
export interface Manifest {
  format: number;
  node: string;
  esbuild: string;
  /** The code file (in CACHE_DIR), named by its sha256. */
  code: string;
  /** Input files relative to the repository root. */
  inputs: Record<string, InputRecord>;
}
export const ROOT: string;
export const CACHE_DIR: string;
export const FORMAT: number;
export function bundlePaths(name: string): { entry: string; manifest: string };
export function esbuildVersion(): string | undefined;
export function sha256(file: string): string | undefined;
export function readManifest(name: string): Manifest | undefined;
export function freshBundle(name: string): string | undefined;
