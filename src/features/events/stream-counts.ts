/*
 * What a set of event streams counts, and why a stream ends or is refused: the labels of
 * gateway_event_streams_closed_total and gateway_event_streams_refused_total, read at each
 * scrape through the hub's status.
 */

/** Why an open stream ended (the `reason` label of gateway_event_streams_closed_total). */
export type StreamCloseReason = 'client' | 'slow' | 'session' | 'shutdown' | 'error';
export const STREAM_CLOSE_REASONS: readonly StreamCloseReason[] = [
  'client',
  'slow',
  'session',
  'shutdown',
  'error',
];

/**
 * Why a stream was refused before it opened (the `reason` label of
 * gateway_event_streams_refused_total): past EVENTS_MAX_STREAMS_PER_CLIENT for its caller, past
 * EVENTS_MAX_STREAMS, or a stopping instance (contract section 2.2).
 */
export type StreamRefusal = 'per_client' | 'full' | 'draining';
export const STREAM_REFUSALS: readonly StreamRefusal[] = ['per_client', 'full', 'draining'];

/** What the hub counts, read by the metrics at each scrape. */
export interface EventHubStatus {
  open: number;
  /** Events written to streams, by event name (heartbeats not counted). */
  sent: Readonly<Record<string, number>>;
  closed: Readonly<Record<StreamCloseReason, number>>;
  /** Streams refused before they opened, by reason. */
  refused: Readonly<Record<StreamRefusal, number>>;
}

/** What `status()` reports besides the open streams, as the set counts it. */
export interface Counts {
  sent: Record<string, number>;
  closed: Record<StreamCloseReason, number>;
  refused: Record<StreamRefusal, number>;
}

export function zeroCounts(event: string): Counts {
  return {
    sent: { [event]: 0 },
    closed: zeroes(STREAM_CLOSE_REASONS),
    refused: zeroes(STREAM_REFUSALS),
  };
}

function zeroes<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

/** A copy: the counts go on counting after the scrape that read them. */
export function statusOf(open: number, counts: Counts): EventHubStatus {
  return {
    open,
    sent: { ...counts.sent },
    closed: { ...counts.closed },
    refused: { ...counts.refused },
  };
}
