import { diffLines } from 'diff';

/** A line diff of two YAML texts (jsdiff), removed lines marked `-`, added `+`. */
export function YamlDiff({ before, after }: { before: string; after: string }) {
  const parts = diffLines(before, after);
  const changed = parts.some((p) => p.added || p.removed);
  if (!changed) return <p data-testid="diff">No change.</p>;
  return (
    <pre class="diff" data-testid="diff">
      {parts.map((p, i) => (
        <span key={i} class={p.added ? 'add' : p.removed ? 'del' : 'same'}>
          {p.value
            .replace(/\n$/, '')
            .split('\n')
            .map((l) => `${p.added ? '+ ' : p.removed ? '- ' : '  '}${l}\n`)
            .join('')}
        </span>
      ))}
    </pre>
  );
}
