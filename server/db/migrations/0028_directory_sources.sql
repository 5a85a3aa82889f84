CREATE TABLE `directory_entries` (
	`source_id` text NOT NULL,
	`kind` text NOT NULL,
	`entry_key` text NOT NULL,
	`target_id` text NOT NULL,
	`digest` text NOT NULL,
	`disabled` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`source_id`, `kind`, `entry_key`),
	FOREIGN KEY (`source_id`) REFERENCES `directory_sources`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `directory_entries_target_uq` ON `directory_entries` (`kind`,`target_id`);--> statement-breakpoint
CREATE TABLE `directory_sources` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`url` text NOT NULL,
	`start_tls` integer NOT NULL,
	`allow_plain` integer NOT NULL,
	`ca_certificate` text,
	`bind_dn` text,
	`bind_password_sealed` text,
	`people_base` text NOT NULL,
	`people_filter` text NOT NULL,
	`groups_base` text,
	`groups_filter` text NOT NULL,
	`attributes` text NOT NULL,
	`disabled_filter` text,
	`sync_interval_minutes` integer,
	`applications` text NOT NULL,
	`status` text NOT NULL,
	`last_error` text,
	`last_sync_at` integer,
	`last_full_sync_at` integer,
	`change_mark` text,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `directory_sources_created_idx` ON `directory_sources` (`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `directory_sync_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`source_id` text NOT NULL,
	`state` text NOT NULL,
	`full` integer NOT NULL,
	`trigger` text NOT NULL,
	`counts` text NOT NULL,
	`conflicts` text NOT NULL,
	`skipped` text NOT NULL,
	`error` text,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`heartbeat_at` integer NOT NULL,
	FOREIGN KEY (`source_id`) REFERENCES `directory_sources`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `directory_sync_runs_source_idx` ON `directory_sync_runs` (`source_id`,`started_at`);--> statement-breakpoint
CREATE INDEX `directory_sync_runs_started_idx` ON `directory_sync_runs` (`started_at`);--> statement-breakpoint
ALTER TABLE `groups` ADD `source_id` text;--> statement-breakpoint
ALTER TABLE `groups` ADD `source_dn` text;--> statement-breakpoint
ALTER TABLE `people` ADD `source_id` text;--> statement-breakpoint
ALTER TABLE `people` ADD `source_dn` text;--> statement-breakpoint
CREATE INDEX `people_source_idx` ON `people` (`source_id`,`status`);