import { z } from 'zod';
import { booleanValue } from '../query-values.js';

/*
 * The chat routes' input rules (contract section 2), checked before any upstream call. Path
 * parameters arrive decoded by Express; each is re-encoded as exactly one path segment upstream.
 */

const INT32_MAX = 2_147_483_647;
const USER_ID_MESSAGE = 'user_id must be a positive whole number';

/**
 * Text bound for the chat server is valid Unicode (contract section 7, "Edges"): a JSON body
 * may carry a lone surrogate (`"\ud800"`), which the form encoding upstream would silently
 * turn into U+FFFD. In a `u` regular expression a lone surrogate is a code point of its own,
 * of category Cs; a well-formed pair is one astral code point and does not match.
 */
const LONE_SURROGATE = /\p{Cs}/u;
const isWellFormed = (text: string) => !LONE_SURROGATE.test(text);
const notWellFormed = (field: string) =>
  `${field} must be valid Unicode text, without lone surrogates`;

/** A string field sent on to the chat server. */
export const chatText = (field: string) =>
  z.string({ error: `${field} must be a string` }).refine(isWellFormed, notWellFormed(field));

export const UserIdParams = z.object({
  user_id: z
    .string()
    .regex(/^[1-9][0-9]{0,9}$/, USER_ID_MESSAGE)
    .transform(Number)
    .pipe(z.number().max(INT32_MAX, USER_ID_MESSAGE)),
});

/** One '@', no whitespace or control characters, at most 254 characters. */
const EMAIL = /^[^@\s\p{Cc}]+@[^@\s\p{Cc}]+$/u;

export const EmailParams = z.object({
  email: chatText('email')
    .max(254, 'email must be at most 254 characters')
    .regex(
      EMAIL,
      'email must be one address with exactly one @ and no spaces or control characters',
    ),
});

export const UserQuery = z.object({
  client_gravatar: booleanValue('client_gravatar').optional(),
  include_custom_profile_fields: booleanValue('include_custom_profile_fields').optional(),
});

/**
 * Emoji names: the contract only requires them to travel as one segment. Dot segments and
 * separators are refused outright so that no server or proxy on the way, decoding or
 * normalising, could read them as a different path.
 */
export const EmojiParams = z.object({
  emoji_name: chatText('emoji_name')
    .min(1, 'emoji_name must not be empty')
    .max(100, 'emoji_name must be at most 100 characters')
    .refine((name) => name !== '.' && name !== '..', 'emoji_name must not be . or ..')
    .refine(
      (name) => !/[/\\\p{Cc}]/u.test(name),
      'emoji_name must not contain slashes or control characters',
    ),
});

export const ChannelFoldersQuery = z.object({
  include_archived: booleanValue('include_archived').default(false),
});

export const REACTION_TYPES = ['unicode_emoji', 'realm_emoji', 'service_extra_emoji'] as const;
const STATUS_FIELDS = ['status_text', 'emoji_name', 'emoji_code', 'reaction_type'] as const;
const STATUS_TEXT_LIMIT = 60;

/** Code points after trimming, as the chat server counts (its OpenAPI: "60 Unicode code points"). */
const codePoints = (text: string) => [...text.trim()].length;

export const StatusBody = z
  .strictObject(
    {
      status_text: chatText('status_text')
        .refine(
          (text) => codePoints(text) <= STATUS_TEXT_LIMIT,
          `status_text must be at most ${STATUS_TEXT_LIMIT} characters`,
        )
        .optional(),
      emoji_name: chatText('emoji_name').optional(),
      emoji_code: chatText('emoji_code').optional(),
      reaction_type: z
        .enum(REACTION_TYPES, {
          error: `reaction_type must be one of ${REACTION_TYPES.join(', ')}`,
        })
        .optional(),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown field ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}; allowed: ${STATUS_FIELDS.join(', ')}`
          : issue.code === 'invalid_type'
            ? 'the body must be a JSON object'
            : undefined,
    },
  )
  .refine((body) => STATUS_FIELDS.some((field) => body[field] !== undefined), {
    message: `the body must set at least one of ${STATUS_FIELDS.join(', ')}`,
  })
  .refine(
    (body) =>
      body.emoji_name !== undefined ||
      (body.emoji_code === undefined && body.reaction_type === undefined),
    { message: 'emoji_code and reaction_type need emoji_name', path: ['emoji_name'] },
  );
export type StatusBody = z.output<typeof StatusBody>;
