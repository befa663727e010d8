// Hiding secrets inside configuration values that are not secrets as a whole: a password in the
// user info or in a `password=` query parameter of a connection URL.

/**
 * A URL's password replaced by `***` (`postgres://user:***@host/db`, also a `password=` query
 * parameter); any other text as it is. Works on the text, so it never fails: for config values
 * shown in logs and DescribeConfigs.
 */
export function hideUrlPassword(value: string): string {
  return value
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:?#]*):[^/?#]*@/i, '$1:***@')
    .replace(/([?&]password=)[^&#]*/gi, '$1***')
}

/**
 * A PostgreSQL connection URL without its password (user info or `password=` parameter), for
 * messages and logs: the URL as WHATWG URL prints it, or `(unparsable URL)`.
 */
export function redactPostgresUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password !== '') u.password = '***'
    if (u.searchParams.has('password')) u.searchParams.set('password', '***')
    return u.toString()
  } catch {
    return '(unparsable URL)'
  }
}
