/** The last whole second {@link rfc3339Now} formatted, and its text: every call within one second shares the formatting. */
let lastSecond = Number.NaN;
let lastSecondText = '';

/**
 * The current time as metav1.Time serialises it: RFC 3339 in UTC with
 * whole seconds (`2026-11-28T01:02:03Z`). Formatted once per second, since
 * creation timestamps and managedFields times are taken on every write.
 * Follows `Date.now()`, so mocked clocks apply.
 */
export function rfc3339Now(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== lastSecond) {
    lastSecondText = new Date(second * 1000).toISOString().replace('.000Z', 'Z');
    lastSecond = second;
  }
  return lastSecondText;
}
