// Draws the Gatehouse icon (a gate arch on a blue rounded square) without any image library and
// writes resources/icon.svg, icon.png (512 px), icons/<n>x<n>.png and icon.ico (PNG-compressed).
import { mkdirSync, writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const out = new URL('../resources/', import.meta.url);
mkdirSync(new URL('icons/', out), { recursive: true });

const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">
  <rect x="2" y="2" width="60" height="60" rx="14" fill="#2f5bd3"/>
  <path d="M16 52V30a16 16 0 0 1 32 0v22h-8V30a8 8 0 0 0-16 0v22z" fill="#fff"/>
  <rect x="29" y="38" width="6" height="14" rx="2" fill="#ffd166"/>
</svg>
`;
writeFileSync(new URL('icon.svg', out), svg);

/** Coverage of pixel (x, y) in a 64-unit design space, supersampled 4×4. */
function color(px, py, size) {
  let r = 0, g = 0, b = 0, a = 0;
  const n = 4;
  for (let sy = 0; sy < n; sy++) {
    for (let sx = 0; sx < n; sx++) {
      const x = ((px + (sx + 0.5) / n) / size) * 64;
      const y = ((py + (sy + 0.5) / n) / size) * 64;
      const c = shade(x, y);
      if (!c) continue;
      r += c[0]; g += c[1]; b += c[2]; a += 255;
    }
  }
  const k = n * n;
  return a ? [r / (a / 255), g / (a / 255), b / (a / 255), a / k] : [0, 0, 0, 0];
}

function inRoundRect(x, y, x0, y0, w, h, rad) {
  if (x < x0 || y < y0 || x > x0 + w || y > y0 + h) return false;
  const cx = Math.min(Math.max(x, x0 + rad), x0 + w - rad);
  const cy = Math.min(Math.max(y, y0 + rad), y0 + h - rad);
  return (x - cx) ** 2 + (y - cy) ** 2 <= rad * rad;
}

function inArch(x, y, outer, inner) {
  // Pillars from y=30 down to 52 with an arch of centre (32, 30).
  const dx = x - 32, dy = y - 30;
  if (y > 52) return false;
  if (y >= 30) return Math.abs(dx) <= outer && Math.abs(dx) >= inner;
  const d = Math.hypot(dx, dy);
  return d <= outer && d >= inner;
}

function shade(x, y) {
  if (!inRoundRect(x, y, 2, 2, 60, 60, 14)) return null;
  if (inRoundRect(x, y, 29, 38, 6, 14, 2)) return [255, 209, 102];
  if (inArch(x, y, 16, 8)) return [255, 255, 255];
  return [47, 91, 211];
}

function crc32(buf) {
  let c, crc = 0xffffffff;
  for (const byte of buf) {
    c = (crc ^ byte) & 0xff;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    crc = (crc >>> 8) ^ c;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

function png(size) {
  const raw = Buffer.alloc((size * 4 + 1) * size);
  for (let y = 0; y < size; y++) {
    raw[y * (size * 4 + 1)] = 0;
    for (let x = 0; x < size; x++) {
      const [r, g, b, a] = color(x, y, size);
      const o = y * (size * 4 + 1) + 1 + x * 4;
      raw[o] = Math.round(r); raw[o + 1] = Math.round(g); raw[o + 2] = Math.round(b); raw[o + 3] = Math.round(a);
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; ihdr[9] = 6; ihdr[10] = 0; ihdr[11] = 0; ihdr[12] = 0;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const sizes = [16, 32, 48, 64, 128, 256, 512];
const pngs = Object.fromEntries(sizes.map((s) => [s, png(s)]));
for (const s of sizes) writeFileSync(new URL(`icons/${s}x${s}.png`, out), pngs[s]);
writeFileSync(new URL('icon.png', out), pngs[512]);

// ICO with PNG-compressed entries (Vista+), 16–256 px.
const icoSizes = [16, 32, 48, 64, 128, 256];
const header = Buffer.alloc(6);
header.writeUInt16LE(0, 0); header.writeUInt16LE(1, 2); header.writeUInt16LE(icoSizes.length, 4);
let offset = 6 + 16 * icoSizes.length;
const entries = [];
for (const s of icoSizes) {
  const e = Buffer.alloc(16);
  e[0] = s === 256 ? 0 : s; e[1] = s === 256 ? 0 : s; e[2] = 0; e[3] = 0;
  e.writeUInt16LE(1, 4); e.writeUInt16LE(32, 6);
  e.writeUInt32LE(pngs[s].length, 8); e.writeUInt32LE(offset, 12);
  offset += pngs[s].length;
  entries.push(e);
}
writeFileSync(new URL('icon.ico', out), Buffer.concat([header, ...entries, ...icoSizes.map((s) => pngs[s])]));
console.log('Icons written to resources/.');
