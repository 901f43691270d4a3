import { useEffect, useState } from 'preact/hooks';
import type { Api, KubeObject } from '../api.js';
import { Problem } from './problem.js';

interface CoreEvent {
  metadata: { uid?: string; name: string };
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
}

/** The events about `obj` (core/v1 Events selected by involvedObject.uid, in its namespace). */
export function EventsPanel({ api, obj }: { api: Api; obj: KubeObject }) {
  const [events, setEvents] = useState<CoreEvent[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const ns = obj.metadata.namespace;
    const q = new URLSearchParams({ fieldSelector: `involvedObject.uid=${obj.metadata.uid ?? ''}`, limit: '100' });
    const base = ns ? `/api/v1/namespaces/${encodeURIComponent(ns)}/events` : '/api/v1/events';
    api.json<{ items: CoreEvent[] }>(api.t(`${base}?${q}`)).then((l) => setEvents(l.items), setError);
  }, [obj.metadata.uid]);
  return (
    <section class="events" aria-labelledby="events-title">
      <h2 id="events-title">Events</h2>
      {error ? <Problem error={error} /> : events === null ? <p>Loading…</p> : events.length === 0 ? <p>No events.</p> : (
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Type</th>
              <th scope="col">Reason</th>
              <th scope="col">Count</th>
              <th scope="col">Last seen</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e) => (
              <tr key={e.metadata.uid ?? e.metadata.name}>
                <td>{e.type}</td>
                <td>{e.reason}</td>
                <td>{e.count ?? 1}</td>
                <td>{e.lastTimestamp}</td>
                <td>{e.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
