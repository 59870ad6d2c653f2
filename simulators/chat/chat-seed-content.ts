import type { ChannelFolder, ChatDraft, CustomEmoji } from './chat-model.js';

/**
 * Drafts of several users, all three types. Timestamps deliberately do not follow id order,
 * so "most recently edited first" (chat document 4.2) differs from id order.
 */
export function seedDrafts(): ChatDraft[] {
  return [
    {
      id: 1,
      userId: 1,
      type: 'stream',
      to: [3],
      topic: 'release plan',
      content: 'Ship **v2** on Friday?',
      timestamp: 1_700_000_300,
    },
    {
      id: 2,
      userId: 1,
      type: 'private',
      to: [2],
      topic: '',
      content: 'Can you review my PR? 🙏',
      timestamp: 1_700_000_900,
    },
    {
      id: 3,
      userId: 1,
      type: '',
      to: [],
      topic: '',
      content: 'Note to self: <script>alert(1)</script> is not a greeting',
      timestamp: 1_700_000_600,
    },
    {
      id: 4,
      userId: 2,
      type: 'private',
      to: [4, 7],
      topic: '',
      content: 'Group retro notes',
      timestamp: 1_700_100_000,
    },
    {
      id: 5,
      userId: 2,
      type: 'stream',
      to: [1],
      topic: 'ops',
      content: 'Rotate the on-call schedule',
      timestamp: 1_700_050_000,
    },
    {
      id: 6,
      userId: 4,
      type: 'stream',
      to: [7],
      topic: 'lab',
      content: 'Samples arrive Tuesday',
      timestamp: 1_700_200_000,
    },
  ];
}

/** Custom emoji with their authors; some deactivated, one without an author. */
export function seedCustomEmoji(): CustomEmoji[] {
  return [
    { id: 1, name: 'green_tick', authorId: 4, deactivated: false },
    { id: 2, name: 'party_parrot', authorId: 2, deactivated: false },
    { id: 3, name: 'old_logo', authorId: 4, deactivated: true },
    { id: 4, name: 'ship_it', authorId: 3, deactivated: false },
    { id: 5, name: 'legacy_logo', authorId: null, deactivated: false },
    { id: 6, name: 'retired_party', authorId: 2, deactivated: true },
    { id: 7, name: 'marie_wave', authorId: 4, deactivated: false },
  ];
}

/**
 * Channel folders whose `order` does not follow their ids, two of them archived, one legacy
 * folder without creator or creation date. By order: 2, 4, 1, 3, 5; by id: 1, 2, 3, 4, 5.
 */
export function seedChannelFolders(): ChannelFolder[] {
  return [
    {
      id: 1,
      name: 'Engineering',
      order: 2,
      dateCreated: 1_691_057_093,
      creatorId: 1,
      description: 'Channels for **engineering** work',
      renderedDescription: '<p>Channels for <strong>engineering</strong> work</p>',
      isArchived: false,
    },
    {
      id: 2,
      name: 'Design',
      order: 0,
      dateCreated: 1_691_157_093,
      creatorId: 2,
      description: '',
      renderedDescription: '',
      isArchived: false,
    },
    {
      id: 3,
      name: 'Old projects',
      order: 3,
      dateCreated: 1_681_057_093,
      creatorId: 1,
      description: 'Kept for the record',
      renderedDescription: '<p>Kept for the record</p>',
      isArchived: true,
    },
    {
      id: 4,
      name: 'Marketing',
      order: 1,
      dateCreated: null,
      creatorId: null,
      description: 'Launches & <campaigns>',
      renderedDescription: '<p>Launches &amp; &lt;campaigns&gt;</p>',
      isArchived: false,
    },
    {
      id: 5,
      name: 'Archive 2023',
      order: 4,
      dateCreated: 1_701_057_093,
      creatorId: 2,
      description: '',
      renderedDescription: '',
      isArchived: true,
    },
  ];
}
