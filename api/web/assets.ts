import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The site's static files (api/web/assets): read once at start, each served with a strong ETag.
 * Pages link them as `/assets/<file>?v=<hash>`, a URL that changes with the content, so browsers
 * and shared caches may keep them for a year.
 */
export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
  version: string;
}

const TYPES: Record<string, string> = { '.css': 'text/css; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.svg': 'image/svg+xml' };

/** Every file the site serves under /assets; a new file is listed here. */
export const ASSET_FILES = ['site.css', 'app.js', 'claim.js', 'pageview.js', 'communities.js'] as const;

const assets = new Map<string, Asset>(
  ASSET_FILES.map((file) => {
    const body = readFileSync(fileURLToPath(new URL(`./assets/${file}`, import.meta.url)));
    const version = createHash('sha256').update(body).digest('base64url').slice(0, 16);
    return [file, { body, type: TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream', etag: `"${version}"`, version }];
  }),
);

export const assetOf = (file: string): Asset | undefined => assets.get(file);

/** The URL a page links a file by: its content hash as the version. */
export function assetUrl(file: (typeof ASSET_FILES)[number]): string {
  const asset = assets.get(file);
  if (!asset) throw new Error(`unknown asset ${file}`);
  return `/assets/${file}?v=${asset.version}`;
}
