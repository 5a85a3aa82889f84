-- PostgreSQL's side of the SQLite migration `people_usernames_groups` (decision 0100).
--
-- `people.username` is added nullable (no table rewrite, no long lock): existing people get theirs
-- at start-up, oldest first and in bounded batches, by the same rule as new people
-- (people/username-backfill.ts), before the server listens. Rows written from now on must carry
-- one: a trigger says so (migration `groups_purge_webhook_index`). This migration first added a
-- CHECK constraint NOT VALID instead, which checks every updated row, also a later migration's
-- update of another column of a person not yet named (`posix_ids`): an upgrade across both failed.
CREATE TABLE "group_members" (
	"group_id" text NOT NULL,
	"person_id" text NOT NULL,
	"added_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "group_members_group_id_person_id_pk" PRIMARY KEY("group_id","person_id")
);
--> statement-breakpoint
CREATE TABLE "groups" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "invitations" ADD COLUMN "groups" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "people" ADD COLUMN "username" text;--> statement-breakpoint
ALTER TABLE "people" ADD COLUMN "given_name" text;--> statement-breakpoint
ALTER TABLE "people" ADD COLUMN "family_name" text;--> statement-breakpoint
ALTER TABLE "group_members" ADD CONSTRAINT "group_members_group_id_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."groups"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "group_members" ADD CONSTRAINT "group_members_person_id_people_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."people"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "group_members_person_idx" ON "group_members" USING btree ("person_id","group_id");--> statement-breakpoint
CREATE INDEX "groups_created_idx" ON "groups" USING btree ("created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "people_username_uq" ON "people" USING btree ("username");