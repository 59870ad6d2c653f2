import type { RouteGuard } from '../http/route-mount.js';
import type { RouteMounter } from '../http/route-mounter.js';
import type { Session } from '../sessions/session-manager.js';
import type { Caller } from './chat/chat-credentials.js';
import type { RouteContext } from './route-context.js';

/**
 * The guards the feature routes are mounted with, one per auth kind of the route table: a
 * route whose kind has no guard here fails when it is mounted, at start-up.
 */
export interface FeatureGuards {
  readonly chatCaller: RouteGuard<Caller>;
  /** Session mode only: the session routes are not mounted otherwise. */
  readonly session?: RouteGuard<Session>;
}

export type FeatureMounter = RouteMounter<RouteContext, FeatureGuards>;
