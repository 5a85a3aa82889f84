/**
 * What counts as an e-mail address anywhere a person's or invitee's address is taken: the rule the
 * JSON schemas apply (ajv-formats' `email`, RFC 5321 dot-atoms, at most 254 characters), in one
 * place for the paths that take an address outside a schema (hosted forms, invitation lists).
 * The looser "one @, no space" check let through `x<victim@other.example>` and `a,b@example.com`,
 * which a mailer reads as a display name or a list, so mail for the account went elsewhere.
 */
import { fullFormats } from 'ajv-formats/dist/formats.js';

const EMAIL = fullFormats.email as RegExp;

export function isEmailAddress(text: string): boolean {
  return text.length <= 254 && EMAIL.test(text);
}
