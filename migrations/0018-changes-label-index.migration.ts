import { type Kysely, sql } from 'kysely';

/**
 * A label index on the change log, for watches with a label selector that
 * resume from far back.
 *
 * A change matters to a label-selected watch when its new state or its
 * previous state matches (entering the selection is sent as ADDED, leaving
 * it as DELETED). Each change row gets `labels`, an array of one element
 * per distinct state, `{"s": "<tenant> <resource>", "l": <its labels>}`,
 * indexed by GIN with jsonb_path_ops. A selector's equality terms become one
 * containment query, `labels @> '[{"s": "t r", "l": {"app": "web"}}]'`,
 * true exactly when one state of a change of that scope has all those
 * labels. GIN drives the scan from the rarest entry (a label value) and
 * skips through the scope's, so a catch-up reads only the changes of its
 * own tenant and resource that carry them. The test is a necessary
 * condition only; the watch still filters every change it reads with the
 * whole selector. The element is built with plain expressions (no query
 * per key): the trigger's one query is the object row's lookup.
 *
 * `labels` is filled by a trigger on insert, so every writer of the log
 * (the write functions, batched writes, tenant moves) gets it without
 * changing: the new state is the row's own `object` when it has one, the
 * previous state for a delete, else the object row just written. Labels
 * stay readable in encrypted bodies (docs/encryption.md).
 *
 * Rows written before this migration have no labels, nor do copies of a
 * moved tenant's history (their new state may be gone): a catch-up that
 * starts below `change_label_index.from_revision`, or below its tenant's
 * `arrived_revision`, reads the log as before (plinth_changes_in_scope).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE changes ADD COLUMN labels jsonb;
    CREATE TABLE change_label_index (
      id smallint PRIMARY KEY CHECK (id = 1),
      from_revision bigint NOT NULL
    );
    INSERT INTO change_label_index (id, from_revision) SELECT 1, value + 1 FROM revision_counter;

    CREATE FUNCTION plinth_change_labels() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE
      scope text := NEW.tenant || ' ' || NEW.resource;
      new_labels jsonb;
      prev_labels jsonb := coalesce(NEW.prev_object -> 'metadata' -> 'labels', '{}');
    BEGIN
      IF NEW.object IS NOT NULL THEN
        new_labels := NEW.object -> 'metadata' -> 'labels';
      ELSIF NEW.type = 'D' THEN
        new_labels := prev_labels;
      ELSE
        SELECT o.body -> 'metadata' -> 'labels' INTO new_labels FROM objects o
          WHERE o.tenant = NEW.tenant AND o.resource = NEW.resource AND o.namespace = NEW.namespace AND o.name = NEW.name;
      END IF;
      new_labels := coalesce(new_labels, '{}');
      -- One element when both states carry the same labels (most updates): half the bytes and index entries.
      IF prev_labels = new_labels OR NEW.type = 'A' THEN
        NEW.labels := jsonb_build_array(jsonb_build_object('s', scope, 'l', new_labels));
      ELSE
        NEW.labels := jsonb_build_array(jsonb_build_object('s', scope, 'l', new_labels), jsonb_build_object('s', scope, 'l', prev_labels));
      END IF;
      RETURN NEW;
    END $fn$;

    CREATE TRIGGER changes_labels BEFORE INSERT ON changes FOR EACH ROW EXECUTE FUNCTION plinth_change_labels();

    CREATE INDEX changes_labels_idx ON changes USING gin (labels jsonb_path_ops);

    -- One scope's changes after p_after that may match p_labels (see above), oldest first. Index scans are off
    -- for this query only so that the GIN index is what finds the rows (a btree range in revision order would
    -- read every change of the scope); the rows found are few by design, and sorted.
    CREATE FUNCTION plinth_changes_with_labels(p_tenant text, p_resource text, p_namespace text, p_name text, p_after bigint, p_limit integer, p_labels jsonb)
    RETURNS SETOF changes LANGUAGE sql STABLE SET enable_indexscan = off SET enable_seqscan = off AS $fn$
      SELECT * FROM changes c
        WHERE c.labels @> p_labels AND c.revision > p_after AND c.tenant = p_tenant AND c.resource = p_resource
          AND (p_namespace IS NULL OR c.namespace = p_namespace) AND (p_name IS NULL OR c.name = p_name)
        ORDER BY c.revision LIMIT p_limit
    $fn$;
  `.execute(db);
}

/** Drops the label index, its trigger and functions, and the column. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP FUNCTION plinth_changes_with_labels(text, text, text, text, bigint, integer, jsonb);
    DROP INDEX changes_labels_idx;
    DROP TRIGGER changes_labels ON changes;
    DROP FUNCTION plinth_change_labels();
    DROP TABLE change_label_index;
    ALTER TABLE changes DROP COLUMN labels;
  `.execute(db);
}
