import { IncomingMessage, type ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { ChatService } from '../../src/features/chat/chat-service.js';
import type { EventHub, StreamOptions } from '../../src/features/events/event-hub.js';
import { openStream } from '../../src/features/events/events-stage.js';

const VERSION = 'A'.repeat(43);

/** A request as Node's parser leaves it: the raw header lines and the parsed object. */
function browserRequest(): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.rawHeaders = [
    'Accept',
    'text/event-stream',
    'Last-Event-ID',
    VERSION,
    'User-Agent',
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0',
    'Cookie',
    'theme=dark; bff_session=the-session-id',
  ];
  req.headers = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    req.headers[req.rawHeaders[i]!.toLowerCase()] = req.rawHeaders[i + 1]!;
  }
  return req;
}

function recordingHub(): { hub: EventHub; opened: StreamOptions[] } {
  const opened: StreamOptions[] = [];
  const hub = {
    open: (_res: ServerResponse, options: StreamOptions) => opened.push(options),
  } as unknown as EventHub;
  return { hub, opened };
}

describe('opening an event stream', () => {
  it('when a stream opens, then what its request headers said is kept in the stream and the headers themselves are let go', () => {
    const { hub, opened } = recordingHub();
    const req = browserRequest();
    openStream(
      { hub, chat: {} as ChatService, cookie: undefined },
      req,
      {} as ServerResponse,
      { email: 'ada@acme.test', apiKey: 'key' },
      false,
    );
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({ variant: 'active', lastEventId: VERSION });
    // The stream lives for hours; its request's headers are not kept that long, in either form.
    expect(req.rawHeaders).toEqual([]);
    expect(req.headers).toEqual({});
  });

  it("when a session cookie names the stream's session, then the session is read before the headers go", () => {
    const { hub, opened } = recordingHub();
    const req = browserRequest();
    openStream(
      {
        hub,
        chat: {} as ChatService,
        cookie: {
          name: 'bff_session',
          read: (r) => /bff_session=([^;]+)/.exec(String(r.headers.cookie))?.[1],
          set: () => undefined,
          clear: () => undefined,
        },
      },
      req,
      {} as ServerResponse,
      { email: 'ada@acme.test', apiKey: 'key' },
      true,
    );
    expect(opened[0]).toMatchObject({ variant: 'archived', session: 'the-session-id' });
    expect(req.headers).toEqual({});
  });
});
