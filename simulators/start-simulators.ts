import { createChatSimulator, type ChatSimulator } from './chat/chat-simulator.js';
import { createImageHost } from './image-host.js';
import { createSearchSimulator, type SearchSimulator } from './search/search-simulator.js';

export interface RunningSimulators {
  search: SearchSimulator;
  chat: ChatSimulator;
  searchOrigin: string;
  chatOrigin: string;
  /** Where product images load from (the search document's image host). */
  imageOrigin: string;
  close(): Promise<void>;
}

/** Both simulated upstreams, listening: for the demo and the simulators' own entry point. */
export async function startSimulators(options: {
  clientToken: string;
  host?: string;
  searchPort?: number;
  chatPort?: number;
  /** Origin the search service's links and `next` point at (its listening origin by default). */
  searchPublicOrigin?: string;
  imagePort?: number;
  /** Origin image URLs point at (the image host's listening origin by default). */
  imagePublicOrigin?: string;
}): Promise<RunningSimulators> {
  const images = createImageHost();
  const imageOrigin = await images.listen(options.imagePort ?? 0, options.host);
  const search = createSearchSimulator({
    clientToken: options.clientToken,
    imageHost: options.imagePublicOrigin ?? imageOrigin,
    ...(options.searchPublicOrigin ? { publicOrigin: options.searchPublicOrigin } : {}),
  });
  const chat = createChatSimulator();
  const [searchOrigin, chatOrigin] = await Promise.all([
    search.listen(options.searchPort ?? 0, options.host),
    chat.listen(options.chatPort ?? 0, options.host),
  ]);
  return {
    search,
    chat,
    searchOrigin,
    chatOrigin,
    imageOrigin: options.imagePublicOrigin ?? imageOrigin,
    close: async () => {
      await Promise.all([search.close(), chat.close(), images.close()]);
    },
  };
}
