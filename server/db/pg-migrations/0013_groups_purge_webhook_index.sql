-- A directory group's members go in the purge plan's batches when the group is deleted (a group may
-- hold everyone): like the references to applications and memberships, no foreign key (scripts/pg-schema.ts).
-- Directory webhook events find the applications with a webhook through an index (decision 0101).
ALTER TABLE "group_members" DROP CONSTRAINT "group_members_group_id_groups_id_fk";
--> statement-breakpoint
CREATE INDEX "applications_webhook_idx" ON "applications" USING btree ("webhook_url");