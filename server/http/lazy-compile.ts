/**
 * Route schemas compiled on first use instead of at start-up. Fastify compiles every route's
 * body/query validator (Ajv) and response serializer (fast-json-stringify) while the app is
 * built; with a few hundred routes that was most of the server's start-up CPU (issue 9: ready
 * within 1 s) and memory for code most processes never run (the desktop app uses a handful of
 * routes per session). Each compiled function is kept after its first call, so a route pays the
 * compilation once, on its first request. Schema mistakes still fail the first request that uses
 * them, which every route's tests make.
 */
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyValidationResult } from 'fastify/types/schema.js';

type Validate = FastifyValidationResult;

/** A validator that compiles itself on its first call; `errors` mirrors the compiled one's. */
export function lazyValidator(compile: () => Validate): Validate {
  let compiled: Validate | undefined;
  const validate: Validate = (data: unknown) => {
    compiled ??= compile();
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
 * the bundled ones), wrapped so each response schema compiles when it first serialises.
 */
export function lazySerializerFactory(): SerializerFactory {
  const build = (SerializerSelector as unknown as () => SerializerFactory)();
  return (externalSchemas, options) => {
    const compileFor = build(externalSchemas, options);
    return (route) => {
      let compiled: Serialize | undefined;
      return (data) => (compiled ??= compileFor(route))(data);
    };
  };
}
