import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import express from 'express';
import { Redis } from 'ioredis';
import { Pool } from 'undici';

/*
 * The reference rows of `npm run bench`, each the simplest server doing one part of the
 * gateway's job: R1 bare node:http and R2 bare Express 5 sending the same bytes, R3 Express
 * plus one ioredis GET of them, R4 Express plus one undici call to the search simulator; R3e is
 * R3 that also holds server-sent event streams the way the gateway's `/api/events` does (one
 * event, then a heartbeat every 25 s), the reference of `npm run bench:events`' E3.
 * Usage: bare-target <row> <port> <body file> [redis url | search origin] [search token]
 */

const [row, portText, bodyFile, dependency = '', token = ''] = process.argv.slice(2);
const port = Number(portText);
const body = readFileSync(bodyFile!);
const json = 'application/json; charset=utf-8';

function listen(server: { listen(port: number, host: string, cb: () => void): unknown }) {
  server.listen(port, '127.0.0.1', () => process.send?.({ event: 'listening' }));
}

switch (row) {
  case 'R1':
    listen(
      createServer((_req, res) => {
        res.writeHead(200, { 'content-type': json, 'content-length': body.length });
        res.end(body);
      }),
    );
    break;
  case 'R2': {
    const app = express();
    app.get('/api/search', (_req, res) => {
      res.type(json).send(body);
    });
    listen(app);
    break;
  }
  case 'R3':
  case 'R3e': {
    const redis = new Redis(dependency);
    const key = `bench:bare:${process.pid}`;
    await redis.set(key, body);
    const app = express();
    app.get('/api/search', async (_req, res) => {
      res.type(json).send(await redis.getBuffer(key));
    });
    if (row === 'R3e') holdEventStreams(app);
    process.on('SIGTERM', () => void redis.del(key).finally(() => process.exit(0)));
    listen(app);
    break;
  }
  case 'R4': {
    const search = new Pool(dependency, { connections: 64 });
    const app = express();
    app.get('/api/search', async (req, res) => {
      const query = req.url.slice(req.url.indexOf('?'));
      const upstream = await search.request({
        method: 'GET',
        path: `/v1/search${query}`,
        headers: { 'service-client-token': token, accept: 'application/json' },
      });
      res.type(json).send(Buffer.from(await upstream.body.arrayBuffer()));
    });
    listen(app);
    break;
  }
  default:
    throw new Error(`unknown row ${row}`);
}

/**
 * `GET /api/events` as the simplest server holds it: the stream's head, `retry:` and one
 * `channel_folders` event (what bench:events' stream client waits for), then a heartbeat
 * comment every 25 s; `/metrics` says how many are open, as the gateway's does.
 */
function holdEventStreams(app: express.Express): void {
  const streams = new Set<express.Response>();
  const first = `retry: 2000\n\nid: ${'A'.repeat(43)}\nevent: channel_folders\ndata: {"folders":[]}\n\n`;
  app.get('/api/events', (_req, res) => {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
    });
    res.write(first);
    streams.add(res);
    res.once('close', () => streams.delete(res));
  });
  app.get('/metrics', (_req, res) => {
    res.type('text/plain').send(`gateway_event_streams ${streams.size}\n`);
  });
  setInterval(() => {
    for (const stream of streams) stream.write(':\n\n');
  }, 25_000).unref();
}
