-- PostgreSQL's side of the SQLite migration `search_and_counts` (members/search.ts, db/row-counts.ts).
--
-- Member search: trigram GIN indexes (pg_trgm, a trusted extension shipped with PostgreSQL: the
-- database owner may create it) over people's e-mail and name, so `q` (a substring, ILIKE) is
-- answered from the indexes instead of reading every member, as SQLite's FTS5 trigram table does.
-- The indexes live on `people` itself: nothing to keep in step.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "people_email_trgm_idx" ON "people" USING gin ("email" gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "people_name_trgm_idx" ON "people" USING gin ("name" gin_trgm_ops);
--> statement-breakpoint
-- Row counts of the tables that grow (the overview), kept by triggers in the writing transaction,
-- so nothing ever counts a table. Unlike SQLite (one writer), several transactions write at once
-- here, and one counter row would make every concurrent sign-up wait for (and under SERIALIZABLE
-- retry after) the others: so each connection adds to a shard of its own, `people#<backend pid
-- mod 16>`, and a read sums the name's rows (at most 17 per table, db/row-counts.ts).
-- Statement-level triggers with transition tables: a bulk insert or a cascading delete adds once.
INSERT INTO "row_counts" ("name", "n") SELECT 'people', count(*) FROM "people" ON CONFLICT ("name") DO NOTHING;
--> statement-breakpoint
INSERT INTO "row_counts" ("name", "n") SELECT 'memberships', count(*) FROM "memberships" ON CONFLICT ("name") DO NOTHING;
--> statement-breakpoint
-- One function for both triggers: a statement's transition table (new_rows for INSERT, old_rows for
-- DELETE; PL/pgSQL plans only the branch it takes) gives how many rows it added or removed.
CREATE FUNCTION "row_counts_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  delta integer;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT count(*) INTO delta FROM new_rows;
  ELSE
    SELECT -count(*) INTO delta FROM old_rows;
  END IF;
  IF delta <> 0 THEN
    INSERT INTO row_counts AS c (name, n) VALUES (TG_TABLE_NAME || '#' || (pg_backend_pid() % 16), delta)
    ON CONFLICT (name) DO UPDATE SET n = c.n + excluded.n;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "row_counts_people_insert" AFTER INSERT ON "people" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "row_counts_changed"();
--> statement-breakpoint
CREATE TRIGGER "row_counts_people_delete" AFTER DELETE ON "people" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "row_counts_changed"();
--> statement-breakpoint
CREATE TRIGGER "row_counts_memberships_insert" AFTER INSERT ON "memberships" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "row_counts_changed"();
--> statement-breakpoint
CREATE TRIGGER "row_counts_memberships_delete" AFTER DELETE ON "memberships" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "row_counts_changed"();
