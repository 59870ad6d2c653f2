import { Router, type Request, type Response } from 'express';
import { AppError } from '../../errors/app-error.js';
import { toAppError, toProblem, type Problem } from '../../errors/to-problem.js';
import type { ChatCall, ChatCredentials } from '../../upstreams/chat/chat-client.js';
import type { SearchStatus } from '../../upstreams/search/search-status.js';
import type { ChatService } from '../chat/chat-service.js';
import type { FeatureMounter } from '../route-guards.js';
import { ROUTES } from '../route-table.js';
import type { BootstrapPart } from './bootstrap-schema.js';

/** Who the first screen is for: the session's (or service account's) body and credentials. */
export interface Caller {
  session: unknown;
  credentials: ChatCredentials;
}

export interface BootstrapOptions {
  chat: ChatService;
  searchStatus: SearchStatus;
  /** The caller, or undefined when nobody is logged in (session mode); throws when it cannot tell. */
  identify(req: Request, res: Response): Promise<Caller | undefined>;
  /** One deadline for every part. */
  deadlineMs: number;
  mounter: FeatureMounter;
}

type Part = BootstrapPart;

/**
 * `GET /api/bootstrap` (contract section 2.1): the frontend's first screen in one call. The
 * parts run in parallel under one deadline; a failing part is `null` with the problem its own
 * route would have answered in `errors`, and the answer is 200 whenever the gateway works.
 */
export function createBootstrapRouter(options: BootstrapOptions): Router {
  const router = Router();
  options.mounter.mount(router, ROUTES.bootstrap, async (req, res) => {
    const errors: (Problem & { part: Part })[] = [];
    const failed = (part: Part, error: unknown) => {
      errors.push({ ...toProblem(toAppError(error), req.id), part });
      return null;
    };
    let expire = () => undefined as void;
    const deadline = new Promise<'late'>((resolve) => {
      const timer = setTimeout(() => resolve('late'), options.deadlineMs);
      expire = () => clearTimeout(timer);
    });
    const inTime = async <T>(work: Promise<T>, source: 'chat' | 'search'): Promise<T> => {
      const outcome = await Promise.race([work, deadline]);
      if (outcome !== 'late') return outcome;
      throw new AppError(
        'UPSTREAM_TIMEOUT',
        `The ${source} service did not answer within ${options.deadlineMs} ms.`,
        { source },
      );
    };

    const search = inTime(options.searchStatus.available(), 'search').catch(() => false);
    let caller: Caller | undefined;
    try {
      caller = await options.identify(req, res);
    } catch (error) {
      failed('session', error);
    }
    const asCaller = async <T>(part: Part, fn: (call: ChatCall) => Promise<T>) => {
      if (!caller) return null;
      const { credentials } = caller;
      try {
        // The chat routes' guard: a refusal of the caller's own key ends their session.
        return await options.mounter.guards.chatCaller.run(req, res, { credentials }, () =>
          inTime(fn({ credentials, requestId: req.id }), 'chat'),
        );
      } catch (error) {
        return failed(part, error);
      }
    };
    const [folders, drafts, available] = await Promise.all([
      asCaller('channel_folders', (call) =>
        options.chat.channelFolders(call, false, { log: req.log }),
      ),
      asCaller('drafts', (call) => options.chat.drafts(call)),
      search,
    ]);
    expire();
    // The folders' cached bytes go in as they are: no parse and re-serialise.
    const body =
      `{"data":{"session":${JSON.stringify(caller?.session ?? null)}` +
      `,"channel_folders":${folders ? folders.representation.body.toString('utf8') : 'null'}` +
      `,"drafts":${JSON.stringify(drafts)}` +
      `,"search":${JSON.stringify({ available })}},"errors":${JSON.stringify(errors)}}`;
    res.status(200).set('Cache-Control', 'no-store').type('application/json').send(body);
  });
  return router;
}
