import { createRandom } from '../sim-random.js';
import {
  EMAIL_VISIBILITY,
  type ChatUser,
  type CustomProfileField,
  type EmailVisibility,
} from './chat-model.js';

/** The organization's custom profile fields, one of each Zulip field type. */
export const CUSTOM_PROFILE_FIELDS: readonly CustomProfileField[] = [
  { id: 1, name: 'Phone number', type: 1 },
  { id: 2, name: 'Biography', type: 2 },
  { id: 3, name: 'Favorite food', type: 1 },
  { id: 4, name: 'Favorite editor', type: 3 },
  { id: 5, name: 'Birthday', type: 4 },
  { id: 6, name: 'Favorite website', type: 5 },
  { id: 7, name: 'Mentor', type: 6 },
  { id: 8, name: 'GitHub username', type: 7 },
  { id: 9, name: 'Pronouns', type: 8 },
];

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * API keys from a fixed-seed PRNG (mulberry32): they look like Zulip's random 32-character
 * keys, yet every simulator instance hands out the same ones, so failures reproduce.
 */
function createKeyGenerator(seed: number): () => string {
  const random = createRandom(seed);
  return () =>
    Array.from({ length: 32 }, () => ALPHANUMERIC[Math.floor(random.next() * 62)] ?? 'a').join('');
}

interface HumanSeed {
  id: number;
  fullName: string;
  local: string;
  role: ChatUser['role'];
  visibility: EmailVisibility;
  timezone: string;
  dateJoined: string;
  avatar: ChatUser['avatarSource'];
  active?: boolean;
  profile?: ChatUser['profileData'];
}

interface BotSeed {
  id: number;
  fullName: string;
  local: string;
  botType: NonNullable<ChatUser['botType']>;
  ownerId: number | null;
  role?: ChatUser['role'];
}

const HUMANS: readonly HumanSeed[] = [
  {
    id: 1,
    fullName: 'Ada Lovelace',
    local: 'ada',
    role: 100,
    visibility: EMAIL_VISIBILITY.admins,
    timezone: 'Europe/London',
    dateJoined: '2021-03-04T09:15+00:00',
    avatar: 'gravatar',
    profile: {
      1: { value: '+44 20 7946 0001', renderedValue: '<p>+44 20 7946 0001</p>' },
      2: {
        value: 'Wrote the **first** program.\n* Notes on <the> Engine',
        renderedValue:
          '<p>Wrote the <strong>first</strong> program.</p>\n<ul>\n<li>Notes on &lt;the&gt; Engine</li>\n</ul>',
      },
      4: { value: 'emacs' },
      5: { value: '1815-12-10' },
      8: { value: 'ada-l' },
      9: { value: 'she/her' },
    },
  },
  {
    id: 2,
    fullName: 'Grace Hopper',
    local: 'grace',
    role: 200,
    visibility: EMAIL_VISIBILITY.everyone,
    timezone: 'America/New_York',
    dateJoined: '2021-03-05T14:02+00:00',
    avatar: 'upload',
    profile: {
      3: { value: 'Pie & coffee', renderedValue: '<p>Pie &amp; coffee</p>' },
      6: { value: 'https://example.org/cobol' },
      7: { value: '[1]' },
    },
  },
  {
    id: 3,
    fullName: 'Moe Reyes',
    local: 'moe',
    role: 300,
    visibility: EMAIL_VISIBILITY.moderators,
    timezone: 'Asia/Tokyo',
    dateJoined: '2022-01-10T08:00+00:00',
    avatar: 'gravatar',
    profile: { 4: { value: 'vim' } },
  },
  {
    id: 4,
    fullName: 'Marie Curie',
    local: 'marie',
    role: 400,
    visibility: EMAIL_VISIBILITY.members,
    timezone: '',
    dateJoined: '2022-06-01T12:30+00:00',
    avatar: 'gravatar',
    profile: { 2: { value: 'Physics, chemistry.', renderedValue: '<p>Physics, chemistry.</p>' } },
  },
  {
    id: 5,
    fullName: 'Gus Guest',
    local: 'gus',
    role: 600,
    visibility: EMAIL_VISIBILITY.everyone,
    timezone: 'Europe/Berlin',
    dateJoined: '2023-02-14T16:45+00:00',
    avatar: 'gravatar',
  },
  {
    id: 6,
    fullName: 'Hal Hidden',
    local: 'hal',
    role: 400,
    visibility: EMAIL_VISIBILITY.nobody,
    timezone: 'UTC',
    dateJoined: '2023-05-20T07:05+00:00',
    avatar: 'upload',
  },
  {
    id: 7,
    fullName: 'Priya Patel',
    local: 'priya',
    role: 400,
    visibility: EMAIL_VISIBILITY.admins,
    timezone: 'Asia/Kolkata',
    dateJoined: '2023-09-09T09:09+00:00',
    avatar: 'gravatar',
    profile: { 1: { value: '+91 22 5555 0100', renderedValue: '<p>+91 22 5555 0100</p>' } },
  },
  {
    id: 8,
    fullName: 'Dora Departed',
    local: 'dora',
    role: 400,
    visibility: EMAIL_VISIBILITY.everyone,
    timezone: 'Australia/Sydney',
    dateJoined: '2021-11-11T11:11+00:00',
    avatar: 'gravatar',
    active: false,
  },
];

const BOTS: readonly BotSeed[] = [
  { id: 9, fullName: 'Notify Bot', local: 'notify-bot', botType: 1, ownerId: 2 },
  { id: 10, fullName: 'Webhook Bot', local: 'webhook-bot', botType: 2, ownerId: 4 },
  { id: 11, fullName: 'Outgoing Bot', local: 'outgoing-bot', botType: 3, ownerId: 4 },
  { id: 12, fullName: 'Embedded Bot', local: 'embedded-bot', botType: 4, ownerId: 1 },
  { id: 13, fullName: 'Legacy Bot', local: 'legacy-bot', botType: 1, ownerId: null },
  { id: 14, fullName: 'Admin Bot', local: 'admin-bot', botType: 1, ownerId: 2, role: 200 },
];

/** Human addresses live on the company's domain; bot addresses on the realm host, as in Zulip. */
const HUMAN_EMAIL_DOMAIN = 'acme.test';

export function seedUsers(realmHost: string): ChatUser[] {
  const nextKey = createKeyGenerator(0x2024_0414);
  const humans = HUMANS.map((seed): ChatUser => ({
    id: seed.id,
    fullName: seed.fullName,
    deliveryEmail: `${seed.local}@${HUMAN_EMAIL_DOMAIN}`,
    password: `${seed.local}-correct-horse-${seed.id}`,
    apiKey: nextKey(),
    role: seed.role,
    isActive: seed.active ?? true,
    botType: null,
    botOwnerId: null,
    emailVisibility: seed.visibility,
    timezone: seed.timezone,
    dateJoined: seed.dateJoined,
    avatarSource: seed.avatar,
    avatarVersion: seed.avatar === 'upload' ? 3 : 1,
    profileData: seed.profile ?? {},
  }));
  const bots = BOTS.map((seed): ChatUser => ({
    id: seed.id,
    fullName: seed.fullName,
    deliveryEmail: `${seed.local}@${realmHost}`,
    password: null,
    apiKey: nextKey(),
    role: seed.role ?? 400,
    isActive: true,
    botType: seed.botType,
    botOwnerId: seed.ownerId,
    emailVisibility: EMAIL_VISIBILITY.everyone,
    timezone: '',
    dateJoined: '2024-01-02T03:04+00:00',
    avatarSource: 'gravatar',
    avatarVersion: 1,
    profileData: {},
  }));
  return [...humans, ...bots];
}
