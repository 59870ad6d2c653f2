import { badRequest } from './chat-errors.js';
import type { CustomEmoji } from './chat-model.js';

/**
 * The one special emoji shipped with the service; its emoji_code is its name. Its reaction
 * type is the chat document's `service_extra_emoji` (Zulip's own name: `zulip_extra_emoji`).
 */
const EXTRA_EMOJI = ['zulip'] as const;

/**
 * A small slice of Zulip's name → codepoint table (static/generated/emoji/emoji_codes.json),
 * enough for statuses in tests. Codes are dash-separated lowercase hex (chat document 4.1).
 */
const NAME_TO_CODEPOINT: Readonly<Record<string, string>> = {
  car: '1f697',
  octopus: '1f419',
  tada: '1f389',
  palm_tree: '1f334',
  coffee: '2615',
  heart: '2764',
  thumbs_up: '1f44d',
  working_on_it: '1f6e0',
  flag_japan: '1f1ef-1f1f5',
};

const CODEPOINT_TO_NAME = new Set(Object.values(NAME_TO_CODEPOINT));

export interface EmojiData {
  emojiCode: string;
  reactionType: string;
}

/**
 * Resolves an emoji name the way Zulip's get_emoji_data does: active custom emoji first, then
 * the service's extra emoji, then Unicode names; otherwise `Emoji '<name>' does not exist`
 * (chat document 7.2).
 */
export function emojiDataForName(emoji: readonly CustomEmoji[], name: string): EmojiData {
  const custom = emoji.find((candidate) => candidate.name === name && !candidate.deactivated);
  if (custom) return { emojiCode: String(custom.id), reactionType: 'realm_emoji' };
  if ((EXTRA_EMOJI as readonly string[]).includes(name)) {
    return { emojiCode: name, reactionType: 'service_extra_emoji' };
  }
  const codepoint = NAME_TO_CODEPOINT[name];
  if (codepoint !== undefined) return { emojiCode: codepoint, reactionType: 'unicode_emoji' };
  throw badRequest(`Emoji '${name}' does not exist`);
}

/**
 * Checks that name, code and type agree, in the order of Zulip's check_emoji_request. The
 * messages `Invalid emoji name.` and `Invalid custom emoji.` are chat document 7.2; the others
 * (`Invalid custom emoji name.`, `This custom emoji has been deactivated.`,
 * `Invalid emoji code.`, `Invalid emoji type.`) are Zulip's for cases the document leaves out.
 */
export function checkEmojiRequest(
  emoji: readonly CustomEmoji[],
  name: string,
  code: string,
  type: string,
): void {
  if (type === 'realm_emoji') {
    const custom = emoji.find((candidate) => String(candidate.id) === code);
    if (!custom) throw badRequest('Invalid custom emoji.');
    if (custom.name !== name) throw badRequest('Invalid custom emoji name.');
    if (custom.deactivated) throw badRequest('This custom emoji has been deactivated.');
    return;
  }
  if (type === 'service_extra_emoji') {
    if (!(EXTRA_EMOJI as readonly string[]).includes(code)) throw badRequest('Invalid emoji code.');
    if (name !== code) throw badRequest('Invalid emoji name.');
    return;
  }
  if (type === 'unicode_emoji') {
    if (!CODEPOINT_TO_NAME.has(code)) throw badRequest('Invalid emoji code.');
    if (NAME_TO_CODEPOINT[name] !== code) throw badRequest('Invalid emoji name.');
    return;
  }
  throw badRequest('Invalid emoji type.');
}
