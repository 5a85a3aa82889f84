import { readFileSync } from 'node:fs';

/**
 * Class names as written, in a bundle whose identifiers are minified without esbuild's `keepNames`
 * (docs/decisions/0347-minified-names-classes-kept.md): each class declaration that starts a line
 * — the server's, and its dependencies' that ship readable code — gets a static block naming it
 * (`static { Object.defineProperty(this, "name", …) }`), so what reads a class's name reads the
 * name it is written with: pino's `type` of a logged error, jose's error names
 * (`this.name = this.constructor.name`), stack traces' "new X". One property per class, made once;
 * `keepNames` redefined `name` on every function the code made (each then with a property
 * dictionary of its own: 3.4 MB of heap at ready).
 */
export const CLASS_DECLARATION = /^([ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:abstract[ \t]+)?class[ \t]+([A-Za-z_$][\w$]*)(?:[ \t]*<[^{\n]*?>)?(?:[ \t]+(?:extends|implements)[ \t]+[^{\n]+?)?[ \t]*\{)/gm;
export function nameClasses(text) {
  return text.replace(CLASS_DECLARATION, (line, _, name) => `${line} static { Object.defineProperty(this, "name", { value: ${JSON.stringify(name)}, configurable: true }); }`);
}
export const keepClassNames = {
  name: 'keep-class-names',
  setup(build) {
    build.onLoad({ filter: /\.(ts|js|mjs|cjs)$/ }, (args) => {
      if (args.path.endsWith('.d.ts')) return undefined;
      const text = readFileSync(args.path, 'utf8');
      CLASS_DECLARATION.lastIndex = 0;
      if (!CLASS_DECLARATION.test(text)) return undefined;
      return { contents: nameClasses(text), loader: args.path.endsWith('.ts') ? 'ts' : 'js' };
    });
  },
};
