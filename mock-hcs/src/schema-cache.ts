/**
 * Route-schema validators shared by every mock-hcs app in a process.
 *
 * Fastify gives each app its own Ajv and compiles every route schema again
 * (fastify lib/validation.js compileSchemasForValidation); a scenario or an
 * explore run builds a fresh app per testbed, so the same dozen admin-route
 * schemas were compiled on every run (~3 % of the library's CPU,
 * docs/explore.md "Performance"). Here a schema is compiled once per
 * (Ajv options, http part, schema text) and the validator reused. The
 * validators are pure functions of their input (no shared schemas are
 * registered with addSchema), so sharing them changes nothing but CPU.
 * The set of distinct schemas is fixed by the routes' source, which bounds
 * the cache; `MAX_ENTRIES` is a guard against a future dynamic schema.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';

type BuildCompiler = ReturnType<typeof AjvCompiler>;
type RouteCompile = ReturnType<BuildCompiler>;
type RouteDefinition = Parameters<RouteCompile>[0];
type Validate = ReturnType<RouteCompile>;

const MAX_ENTRIES = 1024;

export interface SharedValidators {
  /** fastify's `schemaController.compilersFactory.buildValidator`. */
  buildValidator: BuildCompiler;
  /** Schemas compiled so far (on first use; for tests). */
  readonly compiled: () => number;
}

/**
 * A validator compiled on first use. Fastify builds every route's validator
 * when the app starts, but a run uses few of them (the library none of the
 * admin routes'): Ajv's compile (~10 ms a schema in a fresh process) happens
 * when fastify first looks at the function: its `schemaEnv` (read before each
 * call, to pass the parent data) or the call itself. `errors` is the last
 * call's, as on Ajv's own function.
 */
function lazyValidator(build: () => Validate): Validate {
  let fn: Validate | undefined;
  const get = (): Validate => (fn ??= build());
  const v = function (this: unknown, data: unknown, cxt?: unknown): unknown {
    return (get() as unknown as (this: unknown, data: unknown, cxt?: unknown) => unknown).call(this, data, cxt);
  };
  Object.defineProperties(v, {
    errors: { get: () => fn?.errors, enumerable: true },
    schemaEnv: { get: () => get().schemaEnv, enumerable: true },
    schema: { get: () => get().schema, enumerable: true },
  });
  return v as unknown as Validate;
}

/** A validator factory whose compiled schemas outlive the app; one per process is enough. */
export function sharedValidators(): SharedValidators {
  const pool = AjvCompiler();
  const cache = new Map<string, Validate>();
  let compiled = 0;
  const buildValidator: BuildCompiler = (externalSchemas, options) => {
    const compile = pool(externalSchemas, options);
    const prefix = `${JSON.stringify(externalSchemas)}\u0000${JSON.stringify(options ?? {})}\u0000`;
    return (route: RouteDefinition): Validate => {
      const key = `${prefix}${route.httpPart}\u0000${JSON.stringify(route.schema)}`;
      const hit = cache.get(key);
      if (hit) return hit;
      const v = lazyValidator(() => {
        compiled++;
        return compile(route);
      });
      if (cache.size < MAX_ENTRIES) cache.set(key, v);
      return v;
    };
  };
  return { buildValidator, compiled: () => compiled };
}

/** The process's shared validators (a cache of pure functions: no behaviour depends on it). */
export const processValidators: SharedValidators = sharedValidators();
