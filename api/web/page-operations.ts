import { ERROR_ENVELOPE } from '../openapi.ts';
import type { Answer } from '../operations.ts';
import type { Schema } from '../validation.ts';

/** The documented answers and bodies of the site's pages, shared by their route tables. */

export const HTML_PAGE: Answer = { contentType: 'text/html', schema: { type: 'string' } };
export const SEE_OTHER: Answer = { description: 'Done: the page to see next is in Location (with a one-time notice)', contentType: '' };
export const TO_SIGN_IN: Answer = { description: 'Not signed in: to /signin, and back here after signing in', contentType: '' };

/** A failure inside a page is the error page (or the form again with the problem) with the same status. */
export const PAGE_ERRORS: Record<number, Answer> = Object.fromEntries(
  [400, 401, 402, 403, 404, 409, 410, 413, 415, 422, 429].map((status) => [
    status,
    {
      description: 'The error page, or the form again with the problem in plain words; the JSON envelope for the checks before the page',
      contentType: 'application/json',
      alsoContentTypes: ['text/html'],
      schema: ERROR_ENVELOPE,
    },
  ]),
);

/** A page's form posts are URL-encoded. */
export const FORM = 'application/x-www-form-urlencoded';

const CSRF: Schema = { type: 'string', description: "The page's CSRF token (from the form's hidden `_csrf` field)." };

/** A form body's schema: its fields (all strings, as a browser sends them) and the CSRF token. */
export function formOf(fields: Record<string, Schema>, required: string[] = []): Schema {
  return { type: 'object', required: ['_csrf', ...required], properties: { _csrf: CSRF, ...fields } };
}

/** A member page (GET): the page, or to sign-in. */
export const MEMBER_PAGE: Record<number, Answer> = { 200: HTML_PAGE, 302: TO_SIGN_IN, ...PAGE_ERRORS };
/** A member form (POST): to the next page, or the form again with the problem. */
export const MEMBER_FORM: Record<number, Answer> = { 303: SEE_OTHER, 200: HTML_PAGE, ...PAGE_ERRORS };
