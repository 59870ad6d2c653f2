/** Where the deployment's one event queue stands (readiness and metrics show it). */
export type ChatEventsState = 'off' | 'standby' | 'registering' | 'polling' | 'backoff' | 'stopped';

/** Every state, each a value of `gateway_chat_events_queue_state`'s `state` label. */
export const CHAT_EVENTS_STATES: readonly ChatEventsState[] = [
  'off',
  'standby',
  'registering',
  'polling',
  'backoff',
  'stopped',
];

/** What the chat event queue reports (features/chat/chat-events.ts), read at each scrape. */
export interface ChatEventsStatus {
  state: ChatEventsState;
  /** Events applied (heartbeats included: each advances the queue). */
  applied: number;
  /** Queues registered, the first one included. */
  registrations: number;
  /** Seconds since the queue last answered a poll; undefined before the first. */
  lagSeconds: number | undefined;
}
