/**
 * Route schemas compiled on first use instead of at start-up. Fastify compiles every route's
 * body/query validator (Ajv) and response serializer (fast-json-stringify) while the app is
 * built; with a few hundred routes that was most of the server's start-up CPU (issue 9: ready
 * within 1 s) and memory for code most processes never run (the desktop app uses a handful of
 * routes per session). Each compiled function is kept after its first call, so a route pays the
 * compilation once, on its first request. Schema mistakes still fail the first request that uses
 * them, which every route's tests make.
 *
 * An idle server gives back what no request has used for a while (issue 45,
 * docs/decisions/0364-idle-compiled-schemas.md): `dropUnusedCompiled()`, called by the idle
 * reclaim (ops/idle-memory.ts) before its collections, forgets every compiled validator and
 * serializer not called since the previous call — their generated source, closures and Ajv's
 * cache entries — and the route compiles again on its next request, as after a start.
 */
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyValidationResult } from 'fastify/types/schema.js';
import { unionFree } from './union-free.js';

type Validate = FastifyValidationResult;

/** A compiled function that can be forgotten; `used` is set by each call and cleared by each drop pass. */
interface Compiled {
  used: boolean;
  forget(): void;
}

const live = new Set<Compiled>();

/**
 * Forgets every compiled validator and serializer not called since the previous call (the ones
 * called are kept and counted from here); how many were forgotten.
 */
export function dropUnusedCompiled(): number {
  let dropped = 0;
  for (const compiled of live) {
    if (compiled.used) {
      compiled.used = false;
      continue;
    }
    compiled.forget();
    live.delete(compiled);
    dropped++;
  }
  return dropped;
}

/**
 * What the idle reclaim calls: `dropUnusedCompiled` at most once per `minMs`, so what is forgotten
 * went unused for at least that long (between `minMs` and twice it). Without the spacing a reclaim
 * every few quiet seconds forgot the panel's routes while an administrator read a page, and their
 * next save paid the compile (hundreds of ms for the application body) for ~2 MB of heap.
 */
export function dropCompiledUnusedFor(minMs: number, now: () => number = () => performance.now()): () => number {
  let last = now();
  return () => {
    const t = now();
    if (t - last < minMs) return 0;
    last = t;
    return dropUnusedCompiled();
  };
}

/** The idle time after which a route's compiled schemas are let go (decision 0364). */
export const COMPILED_IDLE_MS = 10 * 60_000;

/** How many compiled validators and serializers are held now (tests, the memory bench). */
export function compiledCount(): number {
  return live.size;
}

/**
 * Tests only (test/helpers: makeApp, startOAuthServer, the fuzzer's world): the compiled
 * validators and serializers of this process are shared by every app it builds, by the schema's
 * JSON. Routes build their schemas per app (plugins add fields), so Ajv's own cache, by object,
 * missed, and a test file that builds an app per test compiled the same schemas once per test:
 * a quarter of oauth-token.test.ts's CPU (issue 45). A server builds one app: it never turns
 * this on, and keeps no JSON of its schemas. `shareCompiledSchemas(false)` stops it (and forgets
 * what was shared), for a test of compiling itself.
 */
let sharedCompiled: Map<string, unknown> | undefined;
export function shareCompiledSchemas(share = true): void {
  sharedCompiled = share ? (sharedCompiled ?? new Map()) : undefined;
}
function compiledOnce<T>(key: () => string, compile: () => T): T {
  if (!sharedCompiled) return compile();
  const k = key();
  let compiled = sharedCompiled.get(k) as T | undefined;
  if (compiled === undefined) sharedCompiled.set(k, (compiled = compile()));
  return compiled;
}

/**
 * How the validators of one kind (an Ajv and what its schemas depend on) compile, are named and
 * let go; one object shared by all of them. `key` names what the compiled function depends on
 * (the schema's JSON and the Ajv it is compiled by), for `shareCompiledSchemas`; `release` undoes
 * what `compile` left elsewhere (Ajv's cache entries) when an idle server forgets it.
 */
export interface ValidatorKind {
  compile(schema: object): Validate;
  key(schema: object): string;
  release(schema: object): void;
}

/**
 * One lazy function per schema object: routes share schema objects (`adminErrors`' problemRef for
 * every 4xx, NoQuery, IdParams, HEAD routes their GET's), and what a compiled validator or
 * serializer does depends on nothing else of the route, so each shared schema is one wrapper and
 * one compile instead of one per route and status (~1,650 wrappers at start, and a problem
 * serializer compiled again by each route's first error; decision 0480).
 */
function perSchema<F>(make: (schema: object) => F): (schema: unknown) => F {
  const made = new WeakMap<object, F>();
  return (schema) => {
    if (typeof schema !== 'object' || schema === null) return make(schema as object);
    let one = made.get(schema);
    if (one === undefined) made.set(schema, (one = make(schema)));
    return one;
  };
}

/** `lazyValidator` for one kind, one per schema object (perSchema). */
export function lazyValidators(kind: ValidatorKind): (schema: object) => Validate {
  return perSchema((schema) => lazyValidator(kind, schema));
}

/**
 * A validator that compiles `schema` on its first call; `errors` mirrors the compiled one's.
 * Until then it is this one closure: a server has ~2,000 route schemas (validators and each
 * status's serializer) and most are never used, so what the wrapper holds per schema counts
 * (decision 0366); its drop entry is made when it first compiles.
 */
export function lazyValidator(kind: ValidatorKind, schema: object): Validate {
  let compiled: Validate | undefined;
  let entry: Compiled | undefined;
  const validate: Validate = (data: unknown) => {
    if (!compiled) {
      compiled = compiledOnce(() => kind.key(schema), () => kind.compile(schema));
      entry ??= {
        used: true,
        forget: () => {
          compiled = undefined;
          kind.release(schema);
        },
      };
      live.add(entry);
    }
    entry!.used = true;
    const result = compiled(data);
    validate.errors = compiled.errors;
    return result;
  };
  return validate;
}

type Serialize = (data: unknown) => string;
type SerializerCompiler = (route: object) => Serialize;
type SerializerFactory = (externalSchemas: unknown, options: unknown) => SerializerCompiler;

/**
 * Fastify's own serializer factory (fast-json-stringify, with the shared schemas; the package is
 * a direct dependency within the range Fastify asks for, so both resolve to one copy — loading
 * it from Fastify's folder at run time instead put a second fast-json-stringify and Ajv beside
 * the bundled ones), wrapped so each response schema compiles when it first serialises, from a
 * copy with its unions written as type lists where they can be (http/union-free.ts: no Ajv
 * validator per branch, decision 0365).
 */
export function lazySerializerFactory(): SerializerFactory {
  const build = (SerializerSelector as unknown as () => SerializerFactory)();
  return (externalSchemas, options) => {
    const compileFor = build(externalSchemas, options);
    let context: string | undefined;
    const key = (schema: unknown) => `${(context ??= JSON.stringify([externalSchemas, options]))} ${JSON.stringify(schema)}`;
    // fast-json-stringify reads only the route's `schema` (not its url, method or status).
    const serializerOf = perSchema((schema): Serialize => {
      let compiled: Serialize | undefined;
      let entry: Compiled | undefined;
      return (data) => {
        if (!compiled) {
          compiled = compiledOnce(() => key(schema), () => compileFor({ schema: unionFree(schema) }));
          entry ??= { used: true, forget: () => (compiled = undefined) };
          live.add(entry);
        }
        entry!.used = true;
        return compiled(data);
      };
    });
    return (route) => serializerOf((route as { schema?: unknown }).schema);
  };
}
