/** QR codes for the pages, rendered on the server as SVG (uqr) and inlined as a data: image (CSP `img-src 'self' data:`). */
import { renderSVG } from 'uqr';

export function qrDataUri(text: string): string {
  const svg = renderSVG(text, { ecc: 'M', border: 2, pixelSize: 8 });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}
