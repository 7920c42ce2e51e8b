// Strings kept for long (read-model documents) must not hold the text they were cut from.

/**
 * A copy of `s` that holds no other string. V8 makes a substring of 13 characters or more
 * (slice, split, a regular expression's match) a view into the string it was cut from, which
 * then lives as long as the piece: a post's search term of 13 letters kept in its read model
 * would keep the whole lower-cased post text with it. Joining builds a new flat string.
 */
export function ownCopy(s: string): string {
  return s.length < 13 ? s : [s.slice(0, 1), s.slice(1)].join('');
}
