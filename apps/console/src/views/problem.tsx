import { ApiFailure, messageOf } from '../api.js';

/** An API error as the server said it: code, reason, message and one line per cause (field errors). */
export function Problem({ error }: { error: unknown }) {
  const causes = error instanceof ApiFailure ? error.causes : [];
  return (
    <div class={error instanceof ApiFailure && error.code === 403 ? 'problem forbidden' : 'problem'} role="alert" data-testid="problem">
      <p>{messageOf(error)}</p>
      {causes.length > 0 && (
        <ul>
          {causes.map((c, i) => (
            <li key={i}>
              {c.field && <code>{c.field}</code>} {c.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
