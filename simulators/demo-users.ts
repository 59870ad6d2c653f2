import { createChatSimulator, type CredentialKind } from './chat/chat-simulator.js';

/** The people the README lists for the session-mode demo, one per role, from the seed. */
const KINDS: readonly { kind: CredentialKind; role: string }[] = [
  { kind: 'owner', role: 'owner' },
  { kind: 'administrator', role: "administrator: may set other users' status" },
  { kind: 'moderator', role: 'moderator' },
  { kind: 'member', role: 'member' },
  { kind: 'guest', role: 'guest' },
];

const realm = createChatSimulator();

/** Email and password of each demo user (the chat simulator's seed is the same everywhere). */
export const DEMO_USERS = KINDS.map(({ kind, role }) => {
  const { email, password } = realm.credentials(kind);
  return { email, password: password ?? '', role };
});
