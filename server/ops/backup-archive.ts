/**
 * The archive inside a backup (before gzip and encryption): the files one after another, each a
 * JSON line `{path, mode, size}` and then its bytes, and last a JSON line with every file's size
 * and SHA-256 (the checksum restore verifies before it replaces anything). Lines are short and
 * bounded; bodies stream through, so memory stays constant whatever the sizes.
 *
 * Why not tar: the archive carries a handful of registered files (backup-files.ts) whose names
 * restore checks anyway, and the manifest with checksums would have to be added to a tar too;
 * this is 100 lines with no dependency and no path, link or device semantics to defend against.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { finished, pipeline } from 'node:stream/promises';

const MAGIC = 'gatehouse-archive 1\n';
const MAX_LINE = 64 * 1024;

export interface ArchiveEntry {
  /** Path in the archive (`gatehouse.db`, `tls/ca.pem`, …). */
  path: string;
  mode: number;
  /** Where to read it from. */
  file: string;
  size: number;
}

export interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

export interface Manifest {
  end: true;
  createdAt: string;
  schema: string;
  files: ManifestFile[];
}

/** `stream.pipeline` over a list built at run time (optional stages such as encryption). */
export const pipeAll = pipeline as unknown as (streams: ReadonlyArray<NodeJS.ReadableStream | NodeJS.WritableStream | AsyncIterable<Buffer>>) => Promise<void>;

export class ArchiveError extends Error {
  override name = 'ArchiveError';
}

/** The archive's bytes, file by file (a source for `stream.pipeline`). */
export async function* writeArchive(entries: ArchiveEntry[], facts: { createdAt: string; schema: string }): AsyncGenerator<Buffer> {
  yield Buffer.from(MAGIC);
  const files: ManifestFile[] = [];
  for (const entry of entries) {
    yield Buffer.from(`${JSON.stringify({ path: entry.path, mode: entry.mode, size: entry.size })}\n`);
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of createReadStream(entry.file, { highWaterMark: 64 * 1024 }) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      size += chunk.length;
      yield chunk;
    }
    // The size was promised in the entry's line; a file that changed meanwhile is an error, not a corrupt archive.
    if (size !== entry.size) throw new ArchiveError(`${entry.path} changed size while it was being backed up`);
    files.push({ path: entry.path, size, sha256: hash.digest('hex') });
  }
  yield Buffer.from(`${JSON.stringify({ end: true, ...facts, files } satisfies Manifest)}\n`);
}

export interface ExtractedFile extends ManifestFile {
  mode: number;
  /** Where it was written. */
  staged: string;
}

/**
 * Reads an archive from `source`, writing each file to `stagePath(path)` (which throws for a
 * name it does not accept), and checks sizes and checksums against the manifest at the end.
 * Throws `ArchiveError` for anything malformed, cut short or not matching.
 */
export async function readArchive(
  source: AsyncIterable<Buffer>,
  stagePath: (path: string, mode: number) => string,
): Promise<{ manifest: Manifest; files: ExtractedFile[] }> {
  let buffer: Buffer = Buffer.alloc(0);
  let magicSeen = false;
  let manifest: Manifest | undefined;
  const files: ExtractedFile[] = [];
  let current: { path: string; mode: number; size: number; left: number; hash: ReturnType<typeof createHash>; out: WriteStream; staged: string } | undefined;

  const closeCurrent = async () => {
    const file = current!;
    current = undefined;
    file.out.end();
    await finished(file.out);
    files.push({ path: file.path, size: file.size, sha256: file.hash.digest('hex'), mode: file.mode, staged: file.staged });
  };

  try {
    for await (const chunk of source) {
      buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
      while (buffer.length) {
        if (manifest) throw new ArchiveError('there are bytes after its manifest');
        if (current) {
          const part = buffer.subarray(0, Math.min(current.left, buffer.length));
          buffer = buffer.subarray(part.length);
          current.left -= part.length;
          current.hash.update(part);
          if (!current.out.write(part)) await once(current.out, 'drain');
          if (current.left === 0) await closeCurrent();
          continue;
        }
        const newline = buffer.indexOf(0x0a);
        if (newline < 0) {
          if (buffer.length > MAX_LINE) throw new ArchiveError('a line is too long');
          break; // wait for the rest of the line
        }
        const line = buffer.subarray(0, newline).toString('utf8');
        buffer = buffer.subarray(newline + 1);
        if (!magicSeen) {
          if (`${line}\n` !== MAGIC) throw new ArchiveError('it is not a Gatehouse archive');
          magicSeen = true;
          continue;
        }
        const record = parseLine(line);
        if ('end' in record) {
          manifest = record;
          continue;
        }
        if (files.some((f) => f.path === record.path)) throw new ArchiveError(`it holds ${record.path} twice`);
        const staged = stagePath(record.path, record.mode);
        const out = createWriteStream(staged, { mode: record.mode === 0o644 ? 0o644 : 0o600 });
        await once(out, 'open');
        current = { path: record.path, mode: record.mode, size: record.size, left: record.size, hash: createHash('sha256'), out, staged };
        if (current.left === 0) await closeCurrent();
      }
    }
  } catch (error) {
    current?.out.destroy();
    throw error;
  }
  if (current || !manifest) throw new ArchiveError('it ends early');
  const listed = new Map(manifest.files.map((f) => [f.path, f]));
  if (listed.size !== files.length) throw new ArchiveError('its manifest does not list the files it holds');
  for (const file of files) {
    const expected = listed.get(file.path);
    if (!expected || expected.size !== file.size || expected.sha256 !== file.sha256) throw new ArchiveError(`${file.path} does not match its checksum`);
  }
  return { manifest, files };
}

function parseLine(line: string): Manifest | { path: string; mode: number; size: number } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new ArchiveError('a file header cannot be read');
  }
  const record = value as Record<string, unknown>;
  if (record?.end === true && Array.isArray(record.files) && typeof record.createdAt === 'string' && typeof record.schema === 'string') {
    return record as unknown as Manifest;
  }
  if (typeof record?.path === 'string' && Number.isSafeInteger(record.size) && (record.size as number) >= 0 && Number.isInteger(record.mode)) {
    return { path: record.path, mode: record.mode as number, size: record.size as number };
  }
  throw new ArchiveError('a file header cannot be read');
}
