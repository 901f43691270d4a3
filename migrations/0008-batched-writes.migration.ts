import { type Kysely, sql } from 'kysely';

/**
 * Batched writes: concurrent writes of one replica share one transaction,
 * one hold of the revision counter's lock, one commit and one WAL flush.
 *
 * `plinth_write_batch(ops)` runs each write with the very functions a single
 * write runs (`plinth_create`, `plinth_update`, `plinth_delete`: same
 * checks, accounting, quota, change row and NOTIFY), each inside its own
 * subtransaction (a PL/pgSQL block with an exception handler, i.e. a
 * savepoint). A write that raises (already exists, not found, conflict,
 * tenant terminating, limit or quota refusal, anything else) rolls back to
 * its savepoint, undoing its object row, change row, accounting and its bump
 * of the counter, and is reported in its slot of the result; the others go
 * on. So the committed revisions stay contiguous, and every committed write
 * has both its rows or neither.
 *
 * Revisions stay commit-ordered: the batch takes the counter's row lock
 * before its first write and holds it through its one COMMIT, exactly as a
 * single write does; every revision of the batch is below every revision of
 * a later commit. The counter row is updated once per batch, at its end:
 * meanwhile `plinth_next_revision()` hands out revisions from a
 * transaction-local setting (`plinth.next_revision`). A setting changed in
 * a subtransaction reverts when it rolls back, so a refused write gives its
 * revision back with the rest of its work, and the next write takes it.
 *
 * Lock order stays object rows, then the counter, then usage rows: the rows
 * that the batch's updates and deletes will change are locked first, in key
 * order (so two batches never wait on each other's rows in a cycle), before
 * any write takes the counter.
 *
 * `plinth_write_batch_durable` is the autocommit form, like the single
 * writes' `*_durable` procedures: the batch commits asynchronously
 * (releasing the counter), then `plinth_flush()` commits synchronously, so
 * the call returns only once the batch's commit record is on disk.
 *
 * An op is a JSON object: `op` ('c' create, 'u' update, 'd' delete), `t`
 * tenant, `r` resource, `s` namespace, `n` name, `b` body (create, update),
 * `x` expected revision (update, delete; null for none). A result is
 * `{"r": revision}` (and `"b": last body` for a delete), or
 * `{"e": SQLSTATE, "m": message}`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Outside a batch (the setting empty or unset): bump the counter row, as before.
    CREATE OR REPLACE FUNCTION plinth_next_revision() RETURNS bigint LANGUAGE plpgsql AS $fn$
    DECLARE v text := current_setting('plinth.next_revision', true); r bigint;
    BEGIN
      IF v IS NULL OR v = '' THEN
        UPDATE revision_counter SET value = value + 1 WHERE id = 1 RETURNING value INTO r;
        RETURN r;
      END IF;
      PERFORM set_config('plinth.next_revision', (v::bigint + 1)::text, true);
      RETURN v::bigint;
    END $fn$;

    CREATE FUNCTION plinth_write_one(w jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
    DECLARE res jsonb;
    BEGIN
      CASE w ->> 'op'
        WHEN 'c' THEN
          RETURN jsonb_build_object('r', plinth_create(w ->> 't', w ->> 'r', w ->> 's', w ->> 'n', w -> 'b'));
        WHEN 'u' THEN
          RETURN jsonb_build_object('r', plinth_update(w ->> 't', w ->> 'r', w ->> 's', w ->> 'n', w -> 'b', (w ->> 'x')::bigint));
        WHEN 'd' THEN
          SELECT jsonb_build_object('r', d.revision, 'b', d.body) INTO res
            FROM plinth_delete(w ->> 't', w ->> 'r', w ->> 's', w ->> 'n', (w ->> 'x')::bigint) d;
          RETURN res;
      END CASE;
    END $fn$;

    CREATE FUNCTION plinth_write_batch(p_ops jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
    DECLARE w jsonb; results jsonb[] := '{}'; base bigint; last bigint;
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      PERFORM 1 FROM objects o
        JOIN jsonb_to_recordset(p_ops) AS k(op text, t text, r text, s text, n text)
          ON o.tenant = k.t AND o.resource = k.r AND o.namespace = k.s AND o.name = k.n
        WHERE k.op <> 'c'
        ORDER BY o.tenant, o.resource, o.namespace, o.name
        FOR UPDATE OF o;
      SELECT value INTO base FROM revision_counter WHERE id = 1 FOR UPDATE;
      PERFORM set_config('plinth.next_revision', (base + 1)::text, true);
      FOR w IN SELECT e.value FROM jsonb_array_elements(p_ops) WITH ORDINALITY AS e(value, i) ORDER BY e.i LOOP
        BEGIN
          results := results || plinth_write_one(w);
        EXCEPTION WHEN OTHERS THEN
          results := results || jsonb_build_object('e', SQLSTATE, 'm', SQLERRM);
        END;
      END LOOP;
      last := current_setting('plinth.next_revision')::bigint - 1;
      PERFORM set_config('plinth.next_revision', '', true);
      IF last > base THEN
        UPDATE revision_counter SET value = last WHERE id = 1;
      END IF;
      RETURN to_jsonb(results);
    END $fn$;

    CREATE PROCEDURE plinth_write_batch_durable(p_ops jsonb, INOUT results jsonb)
    LANGUAGE plpgsql AS $fn$
    BEGIN
      results := plinth_write_batch(p_ops);
      COMMIT;
      PERFORM plinth_flush();
    END $fn$;
  `.execute(db);
}

/** Drops the batch functions and restores the initial migration's plinth_next_revision. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION plinth_next_revision() RETURNS bigint LANGUAGE sql AS $fn$
      UPDATE revision_counter SET value = value + 1 WHERE id = 1 RETURNING value
    $fn$;
    DROP PROCEDURE plinth_write_batch_durable(jsonb, jsonb);
    DROP FUNCTION plinth_write_batch(jsonb);
    DROP FUNCTION plinth_write_one(jsonb);
  `.execute(db);
}
