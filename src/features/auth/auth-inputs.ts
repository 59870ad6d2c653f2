import { z } from 'zod';
import { EmailParams, chatText } from '../chat/chat-inputs.js';

/** `POST /api/auth/login`: the chat email with either the password or an API key, not both. */
export const LoginBody = z
  .strictObject(
    {
      email: EmailParams.shape.email,
      // Sent on to the chat server: valid Unicode, as every text bound there (chat-inputs.ts).
      password: chatText('password').min(1, 'password must not be empty').max(1024).optional(),
      api_key: z
        .string({ error: 'api_key must be a string' })
        .regex(/^[A-Za-z0-9]{1,128}$/, 'api_key must be letters and digits only')
        .optional(),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown field ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}; allowed: email, password, api_key`
          : issue.code === 'invalid_type' && issue.path?.length === 0
            ? 'the body must be a JSON object'
            : undefined,
    },
  )
  .refine((body) => (body.password === undefined) !== (body.api_key === undefined), {
    message: 'give exactly one of password or api_key',
    path: ['password'],
  });
export type LoginBody = z.output<typeof LoginBody>;
