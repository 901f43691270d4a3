/** Bytes of request and answer body that count as one more seat of work. */
export const SEAT_BYTES = 16 * 1024;
/** The most seats one request occupies while it executes (upstream's work estimator caps at 10, `maximumSeats`). */
export const MAX_SEATS = 10;
import { indexEntriesOf, seatsForIndexEntries } from './storage-work.js';

/** Weight of the newest answer in a tenant's running average of answer sizes. */
const ALPHA = 0.2;

/** Whether a request is a read (its answer size is predicted from the tenant's recent reads) or a write. */
type RequestClass = 'read' | 'write';

function classOf(method: string): RequestClass {
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS' ? 'read' : 'write';
}

/** Seats of work for `bytes` of body moved, unclamped: one for the request itself, one more per SEAT_BYTES. */
export function seatsFor(bytes: number): number {
  return 1 + Math.floor(Math.max(0, bytes) / SEAT_BYTES);
}

/**
 * Estimates how many seats a request occupies while it executes, as
 * upstream's API Priority and Fairness work estimator gives a request a
 * width, and measures the work it actually did. Upstream's estimator counts
 * objects (lists) and watchers (writes); here the work of the replica's
 * event loop is dominated by bytes parsed, validated, serialised and
 * encrypted, so the estimate is by bytes: one seat, plus one per 16 KiB of
 * request body (`Content-Length`, known before the body is read) and of the
 * answer the tenant's recent requests of the same kind (reads or writes)
 * produced, at most {@link MAX_SEATS}. A tenant whose writes come back as
 * large error answers therefore has its next writes estimated wide too.
 * Writes are also priced by what they make PostgreSQL index: the labels of
 * the object stored ({@link seatsForIndexEntries}), charged in full when
 * the write finishes, and estimated for the tenant's next writes from its
 * recent ones (a body's labels are known only once it is read, after
 * admission).
 */
export class WorkEstimator {
  /** Running average of answer bytes per tenant and class (one entry per tenant that sent requests here). */
  private readonly answerBytes = new Map<string, number>();
  /** Running average of the index seats of each tenant's writes (tenants whose writes stored labels). */
  private readonly indexSeats = new Map<string, number>();

  /** Seats for a request of `tenant` with this method and declared body length (1 to MAX_SEATS). */
  estimate(tenant: string, method: string, contentLength: number): number {
    const expected = this.answerBytes.get(`${classOf(method)}/${tenant}`) ?? 0;
    const indexed = classOf(method) === 'write' ? Math.floor(this.indexSeats.get(tenant) ?? 0) : 0;
    return Math.min(MAX_SEATS, seatsFor((Number.isFinite(contentLength) ? contentLength : 0) + expected) + indexed);
  }

  /**
   * Records what a finished request moved (and, for a write that stored an
   * object, that object's `labels`) and returns its actual work in seats,
   * unclamped (a 100 MiB list is charged as the 6,400 seats of work it
   * was, a create of 100,000 labels as the 1,562 seats of its label index
   * entries plus its bytes, so its tenant gives way to others for that long).
   */
  observe(tenant: string, method: string, bytesIn: number, bytesOut: number, labels = 0): number {
    const key = `${classOf(method)}/${tenant}`;
    const prev = this.answerBytes.get(key);
    this.answerBytes.set(key, prev === undefined ? bytesOut : prev + ALPHA * (bytesOut - prev));
    const indexed = classOf(method) === 'write' ? seatsForIndexEntries(indexEntriesOf(method, labels)) : 0;
    if (classOf(method) === 'write') {
      const was = this.indexSeats.get(tenant);
      const now = was === undefined ? indexed : was + ALPHA * (indexed - was);
      // Forget tenants whose writes have gone back to plain ones: the map holds only label-heavy writers.
      if (now < 0.5) this.indexSeats.delete(tenant);
      else this.indexSeats.set(tenant, now);
    }
    return seatsFor(bytesIn + bytesOut) + indexed;
  }
}
