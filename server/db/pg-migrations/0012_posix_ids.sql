CREATE TABLE "posix_id_sequence" (
	"name" text PRIMARY KEY NOT NULL,
	"next_value" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "groups" ADD COLUMN "gid_number" integer;--> statement-breakpoint
ALTER TABLE "people" ADD COLUMN "uid_number" integer;--> statement-breakpoint
CREATE UNIQUE INDEX "groups_gid_number_uq" ON "groups" USING btree ("gid_number");--> statement-breakpoint
CREATE UNIQUE INDEX "people_uid_number_uq" ON "people" USING btree ("uid_number");
--> statement-breakpoint
-- PostgreSQL's side of the SQLite migration `posix_ids` (spec ldap.md): a real sequence, which
-- several instances may draw from at once and which never goes back (a rolled-back insert leaves a
-- gap, never a reuse). Existing people are numbered oldest first, then existing groups; new rows
-- take the next value as their column default. `posix_id_sequence` (SQLite's counter) stays empty.
CREATE SEQUENCE "posix_id_seq" START WITH 10000;
--> statement-breakpoint
UPDATE "people" SET "uid_number" = r.n FROM (SELECT "id", 9999 + row_number() OVER (ORDER BY "created_at", "id") AS n FROM "people") AS r WHERE r."id" = "people"."id";
--> statement-breakpoint
UPDATE "groups" SET "gid_number" = r.n FROM (SELECT "id", 9999 + (SELECT count(*) FROM "people") + row_number() OVER (ORDER BY "created_at", "id") AS n FROM "groups") AS r WHERE r."id" = "groups"."id";
--> statement-breakpoint
SELECT setval('posix_id_seq', 10000 + (SELECT count(*) FROM "people") + (SELECT count(*) FROM "groups"), false);
--> statement-breakpoint
ALTER TABLE "people" ALTER COLUMN "uid_number" SET DEFAULT nextval('posix_id_seq');
--> statement-breakpoint
ALTER TABLE "groups" ALTER COLUMN "gid_number" SET DEFAULT nextval('posix_id_seq');
