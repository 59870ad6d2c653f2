import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The `{image_host}` of the search document (section 2.3) for the demo: any product or logo
 * image path answers with a small generated SVG (a colour from the path, and the size asked
 * for), so the demo page's images load on a machine without network.
 */
export interface ImageHost {
  listen(port?: number, host?: string): Promise<string>;
  close(): Promise<void>;
}

const IMAGE_PATH = /^\/(products|logos)\/([\w.-]+)\/(\d{2,3})\.(jpg|png|webp)$/;

export function createImageHost(): ImageHost {
  const server: Server = createServer((req, res) => {
    const match = IMAGE_PATH.exec(req.url ?? '');
    if (req.method !== 'GET' || !match) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const [, kind, key = '', size = '256'] = match;
    const hue = createHash('sha256').update(key).digest()[0]! * 1.4;
    const label = key.replace(/^prd-0*/, '#').slice(0, 8);
    const svg =
      `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 100 100">` +
      `<rect width="100" height="100" fill="hsl(${hue.toFixed(0)} 55% ${kind === 'logos' ? 35 : 78}%)"/>` +
      `<text x="50" y="56" font-family="sans-serif" font-size="14" text-anchor="middle">${label}</text></svg>`;
    res.writeHead(200, {
      'content-type': 'image/svg+xml',
      'cache-control': 'public, max-age=86400',
      'content-length': Buffer.byteLength(svg),
    });
    res.end(svg);
  });
  return {
    listen(port = 0, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const { port: bound } = server.address() as AddressInfo;
          resolve(`http://${host}:${bound}`);
        });
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
