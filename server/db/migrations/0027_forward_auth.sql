CREATE TABLE `forward_auth_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`session_id` text NOT NULL,
	`person_id` text NOT NULL,
	`host` text NOT NULL,
	`rd` text NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `forward_auth_codes_expires_idx` ON `forward_auth_codes` (`expires_at`);--> statement-breakpoint
CREATE TABLE `forward_auth_hosts` (
	`host` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `forward_auth_hosts_app_idx` ON `forward_auth_hosts` (`application_id`);--> statement-breakpoint
CREATE TABLE `forward_auth_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`session_id` text NOT NULL,
	`application_id` text NOT NULL,
	`person_id` text NOT NULL,
	`host` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`person_id`) REFERENCES `people`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `forward_auth_sessions_token_uq` ON `forward_auth_sessions` (`token_hash`);--> statement-breakpoint
CREATE INDEX `forward_auth_sessions_session_idx` ON `forward_auth_sessions` (`session_id`);--> statement-breakpoint
CREATE INDEX `forward_auth_sessions_person_app_idx` ON `forward_auth_sessions` (`person_id`,`application_id`);--> statement-breakpoint
CREATE INDEX `forward_auth_sessions_app_idx` ON `forward_auth_sessions` (`application_id`);--> statement-breakpoint
CREATE INDEX `forward_auth_sessions_expires_idx` ON `forward_auth_sessions` (`expires_at`);--> statement-breakpoint
ALTER TABLE `applications` ADD `forward_auth` text;