import { z } from 'zod';
import { ProblemSchema } from '../../errors/to-problem.js';
import { ChannelFoldersResponse, DraftsResponse } from '../../upstreams/chat/chat-schemas.js';
import { SessionDescription } from '../auth/describe-session.js';

export const BOOTSTRAP_PARTS = ['session', 'channel_folders', 'drafts'] as const;
export type BootstrapPart = (typeof BOOTSTRAP_PARTS)[number];

/** The service account a service-mode gateway acts as: the `session` part in service mode. */
export const ServiceAccountSession = z.object({
  mode: z.literal('service'),
  user: z.object({ email: z.string() }),
});

/** `GET /api/bootstrap` (contract section 2.1), as the OpenAPI document describes it. */
export const BootstrapBody = z.object({
  data: z.object({
    session: z.union([SessionDescription, ServiceAccountSession]).nullable(),
    channel_folders: ChannelFoldersResponse.nullable(),
    drafts: DraftsResponse.nullable(),
    search: z.object({ available: z.boolean() }),
  }),
  errors: z.array(ProblemSchema.extend({ part: z.enum(BOOTSTRAP_PARTS) })),
});
