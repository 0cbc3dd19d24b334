import { readFile } from 'node:fs/promises';

/**
 * The page's files, shipped in the package: `public/` (HTML, CSS) and `client/` (the page's
 * TypeScript compiled by tsc). Nothing comes from a CDN.
 */
const PUBLIC_DIR = new URL('../../public/', import.meta.url);
const CLIENT_DIR = new URL('../../dist/client/', import.meta.url);

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** Only names of this shape are served: no `..`, no directories, no dotfiles. */
const FILE_NAME = /^\/([a-z0-9-]+\.(?:js|css))$/;

export interface StaticFile {
  body: Buffer;
  type: string;
}

export async function readClientFile(path: string): Promise<StaticFile | null> {
  const name = path === '/' ? 'index.html' : FILE_NAME.exec(path)?.[1];
  if (name === undefined) return null;
  try {
    const body = await readFile(new URL(name, name.endsWith('.js') ? CLIENT_DIR : PUBLIC_DIR));
    return { body, type: TYPES[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream' };
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return null;
    throw error;
  }
}
