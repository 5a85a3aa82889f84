-- A directory group's members go in the purge plan's batches when the group is deleted (a group may
-- hold everyone): like the references to applications and memberships, no foreign key (scripts/pg-schema.ts).
-- Directory webhook events find the applications with a webhook through an index (decision 0101).
--
-- New and renamed people must carry a username (decision 0100): a trigger on INSERT and on UPDATE
-- OF username, as on SQLite, so an update of another column of a person the start-up backfill has
-- not named yet (a later migration's) still passes. It replaces the CHECK constraint an earlier
-- form of migration `people_usernames_groups` added, where that ran.
ALTER TABLE "group_members" DROP CONSTRAINT "group_members_group_id_groups_id_fk";
--> statement-breakpoint
CREATE INDEX "applications_webhook_idx" ON "applications" USING btree ("webhook_url");--> statement-breakpoint
ALTER TABLE "people" DROP CONSTRAINT IF EXISTS "people_username_required";
--> statement-breakpoint
CREATE FUNCTION "people_username_required"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."username" IS NULL THEN
    RAISE EXCEPTION 'NOT NULL constraint failed: people.username' USING ERRCODE = 'not_null_violation', COLUMN = 'username', TABLE = 'people';
  END IF;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "people_username_required" BEFORE INSERT OR UPDATE OF "username" ON "people" FOR EACH ROW EXECUTE FUNCTION "people_username_required"();
