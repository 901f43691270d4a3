/** What a redacted secret reads as. */
export const REDACTED = 'xxxxx';

// `scheme://user:password@host`: the password runs to the last `@` of the authority, which ends at the
// first `/`, `?` or `#` (WHATWG URL parsing, which ioredis uses; libpq's URIs are a subset). Blanks do
// not end it: a password with a blank is exactly what gets a URL rejected and echoed.
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*:)[^\r\n/?#]*@/gi;
// `password=…` (libpq key/value strings, URI query parameters, also `sslpassword=`): a single-quoted
// value with backslash escapes, or up to the next blank or `&`.
const KEY_VALUE_PASSWORD = /(password\s*=\s*)('(?:\\.|[^'\\])*'?|[^\s&]*)/gi;

/**
 * Replaces the passwords in `text` with {@link REDACTED}: those of URLs
 * (`postgres://user:secret@host` → `postgres://user:xxxxx@host`, also
 * `redis://:secret@host`) and of `password=` settings (`host=db
 * password=secret`, `?password=secret`). For configuration values echoed
 * in messages. Pure; text without credentials comes back unchanged.
 */
export function redactCredentials(text: string): string {
  return text.replace(URL_PASSWORD, `$1${REDACTED}@`).replace(KEY_VALUE_PASSWORD, `$1${REDACTED}`);
}
