import { AppError } from '../../errors/app-error.js';

/**
 * Every chat call, by the `operation` label its metrics carry. Which call failed matters too:
 * some messages mean different things on different endpoints.
 */
export const CHAT_OPERATIONS = [
  'drafts',
  'channel-folders',
  'streams',
  'user',
  'status',
  'emoji',
  'login',
  'me',
  'register',
  'events',
  'delete-queue',
] as const;

export type ChatOperation = (typeof CHAT_OPERATIONS)[number];

/**
 * The event queue is gone (GET /events' BAD_EVENT_QUEUE_ID: garbage-collected, or the server
 * restarted): the client registers a new one and takes its snapshot as the truth. One of the
 * error family, a documented refusal of what the gateway sent (a 400 from the chat server):
 * its call's outcome is `client_error`, and it is no fault for the breaker. Its code and detail
 * are its row's in upstream-failures.ts.
 */
export class EventQueueLost extends AppError {
  constructor(
    readonly queueId: string,
    ...error: ConstructorParameters<typeof AppError>
  ) {
    super(...error);
    this.name = 'EventQueueLost';
  }
}
