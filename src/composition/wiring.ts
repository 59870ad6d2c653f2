import type { Logger } from 'pino';
import type { Config } from '../../config/load-config.js';
import type { Lifecycle } from '../lifecycle/lifecycle.js';

/** What every part of the gateway is built with. */
export interface Wiring {
  config: Config;
  logger: Logger;
  /** The clock of sessions, cache entries and in-process rate-limit windows. */
  now: () => number;
  /** Where each part registers its start and the phases of its stop, where it is made. */
  lifecycle: Lifecycle;
}
