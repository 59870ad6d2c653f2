import { StringDecoder } from 'node:string_decoder';

/*
 * Reads one `GET /api/events` answer off a raw socket, as bytes arrive: the HTTP/1.1 status line
 * and headers, the chunked body (Node sends a response without Content-Length chunked), and the
 * server-sent events in it (the WHATWG event-stream format: blocks ended by a blank line, `field:
 * value` lines, comments starting with `:`). Kept small and allocation-light: the events bench
 * runs ten thousand of these in one process.
 */

export interface SseEvent {
  /** `message` when the block names none. */
  event: string;
  id: string | undefined;
  data: string;
}

export interface SseReaderHandlers {
  /** The status line and headers are in; `status` is the status code. */
  onHead(status: number, headers: ReadonlyMap<string, string>): void;
  onEvent(event: SseEvent): void;
  /** The body ended (the last chunk) or could not be read; the socket should be closed. */
  onEnd(reason: string): void;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const MAX_HEAD_BYTES = 16 * 1024;

export class SseReader {
  private head: Buffer | undefined = Buffer.alloc(0);
  private chunked = false;
  /** Bytes of the current chunk still to come; -1 while a size line is awaited. */
  private chunkLeft = -1;
  /** Bytes not yet framed: a partial size line, or the CRLF after a chunk's data. */
  private pending = Buffer.alloc(0);
  private skipCrlf = 0;
  private readonly decoder = new StringDecoder('utf8');
  private text = '';
  private ended = false;

  constructor(private readonly handlers: SseReaderHandlers) {}

  push(bytes: Buffer): void {
    if (this.ended) return;
    if (this.head !== undefined) {
      this.head = Buffer.concat([this.head, bytes]);
      const end = this.head.indexOf(HEAD_END);
      if (end < 0) {
        if (this.head.length > MAX_HEAD_BYTES) this.end('head too long');
        return;
      }
      const rest = this.head.subarray(end + HEAD_END.length);
      const ok = this.parseHead(this.head.subarray(0, end).toString('latin1'));
      this.head = undefined;
      if (!ok) return;
      bytes = rest;
    }
    if (this.chunked) this.unchunk(bytes);
    else this.body(bytes);
  }

  private parseHead(text: string): boolean {
    const [statusLine = '', ...lines] = text.split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
    const headers = new Map<string, string>();
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon > 0)
        headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    this.chunked = /chunked/i.test(headers.get('transfer-encoding') ?? '');
    this.handlers.onHead(status, headers);
    if (status !== 200) {
      this.end(`status ${status}`);
      return false;
    }
    return true;
  }

  /** Chunked transfer coding (RFC 9112 §7.1): `size CRLF data CRLF`, ended by a size of 0. */
  private unchunk(bytes: Buffer): void {
    let buffer = this.pending.length > 0 ? Buffer.concat([this.pending, bytes]) : bytes;
    while (buffer.length > 0 && !this.ended) {
      if (this.skipCrlf > 0) {
        const skip = Math.min(this.skipCrlf, buffer.length);
        this.skipCrlf -= skip;
        buffer = buffer.subarray(skip);
        continue;
      }
      if (this.chunkLeft < 0) {
        const eol = buffer.indexOf('\r\n');
        if (eol < 0) break;
        const size = Number.parseInt(buffer.subarray(0, eol).toString('latin1'), 16);
        buffer = buffer.subarray(eol + 2);
        if (!Number.isFinite(size)) return this.end('bad chunk size');
        if (size === 0) return this.end('body ended');
        this.chunkLeft = size;
        continue;
      }
      const take = Math.min(this.chunkLeft, buffer.length);
      this.body(buffer.subarray(0, take));
      buffer = buffer.subarray(take);
      this.chunkLeft -= take;
      if (this.chunkLeft === 0) {
        this.chunkLeft = -1;
        this.skipCrlf = 2;
      }
    }
    this.pending = Buffer.from(buffer);
  }

  private body(bytes: Buffer): void {
    this.text += this.decoder.write(bytes);
    // Blocks end with a blank line; the gateway writes LF only, CRLF is accepted too.
    if (this.text.includes('\r')) this.text = this.text.replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = this.text.indexOf('\n\n')) >= 0) {
      const block = this.text.slice(0, end);
      this.text = this.text.slice(end + 2);
      this.block(block);
    }
  }

  private block(block: string): void {
    let event = 'message';
    let id: string | undefined;
    const data: string[] = [];
    let fields = 0;
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue; // a comment: a heartbeat
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      fields += 1;
      if (name === 'event') event = value;
      else if (name === 'id') id = value;
      else if (name === 'data') data.push(value);
    }
    // A block of comments or of `retry:` alone dispatches no event.
    if (fields > 0 && data.length > 0) this.handlers.onEvent({ event, id, data: data.join('\n') });
  }

  private end(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.handlers.onEnd(reason);
  }
}
