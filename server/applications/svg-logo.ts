/**
 * Whether an uploaded SVG logo is a still drawing and nothing else (issue 36, security findings).
 *
 * A browser reads `image/svg+xml` as XML with namespaces, so this does too: saxes, a strict,
 * namespace-aware XML parser (the one jsdom uses), reports every element and attribute by
 * namespace URI and local name, with character references already decoded. Text patterns could
 * not: `<s:script>` under a prefix bound to the SVG namespace is a script, and `&#106;avascript:`
 * is `javascript:` (both passed the earlier filter). Rules, all by allow-list:
 * - well-formed XML; no DOCTYPE (no entities, no XML bombs), no processing instructions beyond
 *   the XML declaration (`<?xml-stylesheet?>` would pull in a style sheet);
 * - the root is `svg` in the SVG namespace; every element is in the SVG namespace and is one of the
 *   drawing elements below (no `script`, `foreignObject`, `a`, `animate`/`set`, which can rewrite
 *   an `href` to `javascript:`);
 * - no attribute named `on…` (event handlers), in any namespace;
 * - every `href` (plain or `xlink:`) points inside the logo (`#id`) or is an embedded raster image
 *   (`data:image/png|jpeg|gif|webp`).
 * The logo is still served as an image only (pages/brand-routes.ts: `sandbox` CSP, attachment);
 * this check keeps a hostile file out of the store in the first place. Decision record 0181.
 */
import { SaxesParser } from 'saxes';

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Elements of a still drawing (SVG 1.1 / 2 structure, shapes, text, paint servers, clipping, filters). */
const DRAWING_ELEMENTS = new Set([
  'svg', 'g', 'defs', 'symbol', 'use', 'title', 'desc', 'metadata', 'style', 'switch',
  'path', 'rect', 'circle', 'ellipse', 'line', 'polyline', 'polygon', 'image',
  'text', 'tspan', 'textPath',
  'linearGradient', 'radialGradient', 'stop', 'pattern', 'clipPath', 'mask', 'marker',
  'filter', 'feBlend', 'feColorMatrix', 'feComponentTransfer', 'feComposite', 'feConvolveMatrix',
  'feDiffuseLighting', 'feDisplacementMap', 'feDistantLight', 'feDropShadow', 'feFlood', 'feFuncA',
  'feFuncB', 'feFuncG', 'feFuncR', 'feGaussianBlur', 'feImage', 'feMerge', 'feMergeNode',
  'feMorphology', 'feOffset', 'fePointLight', 'feSpecularLighting', 'feSpotLight', 'feTile', 'feTurbulence',
]);

const INSIDE = /^#|^data:image\/(png|jpeg|gif|webp)[;,]/i;

const REFUSED = 'An SVG logo must not contain scripts, event handlers, links, animation or foreign content';

class Refused extends Error {}

/** Why the text is not an acceptable SVG logo, or undefined when it is one. */
export function svgLogoProblem(text: string): string | undefined {
  const parser = new SaxesParser({ xmlns: true, position: true });
  let root = true;
  const refuse = (message: string): never => {
    throw new Refused(message);
  };
  parser.on('doctype', () => refuse('An SVG logo must not declare a DOCTYPE or entities.'));
  parser.on('processinginstruction', (pi) => refuse(`An SVG logo must not contain processing instructions (<?${pi.target}?>).`));
  parser.on('opentag', (tag) => {
    if (root && (tag.uri !== SVG_NS || tag.local !== 'svg')) refuse('This is not an SVG image (its root must be an <svg> element in the SVG namespace).');
    root = false;
    const article = /^[aeiou]/i.test(tag.local) ? 'an' : 'a';
    if (tag.uri !== SVG_NS) refuse(`${REFUSED}: it has ${article} <${tag.local}> element outside the SVG namespace.`);
    if (!DRAWING_ELEMENTS.has(tag.local)) refuse(`${REFUSED}: it has ${article} <${tag.local}> element.`);
    for (const attribute of Object.values(tag.attributes)) {
      if (/^on/i.test(attribute.local)) refuse(`${REFUSED}: it has an ${attribute.local} attribute.`);
      if (attribute.local === 'href' && !INSIDE.test(attribute.value.trim())) {
        refuse(`${REFUSED}: an href points outside the logo (${attribute.value.trim().slice(0, 60)}).`);
      }
    }
  });
  try {
    parser.write(text).close();
  } catch (error) {
    if (error instanceof Refused) return error.message;
    // saxes prefixes its messages with the position ("1:21: unexpected close tag.").
    return `This SVG is not well-formed XML: ${(error as Error).message}`;
  }
  if (root) return 'This is not an SVG image (its root must be an <svg> element in the SVG namespace).';
  return undefined;
}
