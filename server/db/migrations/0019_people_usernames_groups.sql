-- Usernames, given and family names, directory groups (spec claims-and-groups.md; decision 0100).
--
-- `people.username` is added nullable here: existing people get theirs at start-up, oldest first
-- and in bounded batches, by the same rule as new people (people/username-backfill.ts), before
-- the server listens. New rows must carry one: the triggers below are the NOT NULL for rows
-- written from now on (SQLite cannot add a NOT NULL column to a table with rows). The unique index
-- holds meanwhile (NULLs are distinct). A later migration that rebuilds `people` must copy
-- usernames with COALESCE(username, id): a database upgraded across both has not run the backfill yet.
CREATE TABLE `group_members` (
	`group_id` text NOT NULL,
	`person_id` text NOT NULL,
	`added_at` integer NOT NULL,
	PRIMARY KEY(`group_id`, `person_id`),
	FOREIGN KEY (`group_id`) REFERENCES `groups`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`person_id`) REFERENCES `people`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `group_members_person_idx` ON `group_members` (`person_id`,`group_id`);--> statement-breakpoint
CREATE TABLE `groups` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `groups_created_idx` ON `groups` (`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `invitations` ADD `groups` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `people` ADD `username` text;--> statement-breakpoint
CREATE TRIGGER `people_username_required_insert` BEFORE INSERT ON `people` WHEN NEW.username IS NULL BEGIN
  SELECT RAISE(ABORT, 'NOT NULL constraint failed: people.username');
END;--> statement-breakpoint
CREATE TRIGGER `people_username_required_update` BEFORE UPDATE OF username ON `people` WHEN NEW.username IS NULL BEGIN
  SELECT RAISE(ABORT, 'NOT NULL constraint failed: people.username');
END;--> statement-breakpoint
ALTER TABLE `people` ADD `given_name` text;--> statement-breakpoint
ALTER TABLE `people` ADD `family_name` text;--> statement-breakpoint
CREATE UNIQUE INDEX `people_username_uq` ON `people` (`username`);