CREATE TABLE `network_certificates` (
	`id` text PRIMARY KEY NOT NULL,
	`person_id` text NOT NULL,
	`application_id` text NOT NULL,
	`membership_id` text NOT NULL,
	`name` text NOT NULL,
	`serial` text NOT NULL,
	`fingerprint` text NOT NULL,
	`not_after` integer NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`revoked_at` integer,
	`last_used_at` integer,
	FOREIGN KEY (`person_id`) REFERENCES `people`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`membership_id`) REFERENCES `memberships`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `network_certificates_fingerprint_uq` ON `network_certificates` (`fingerprint`);--> statement-breakpoint
CREATE INDEX `network_certificates_person_idx` ON `network_certificates` (`person_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `network_certificates_app_idx` ON `network_certificates` (`application_id`);--> statement-breakpoint
CREATE INDEX `network_certificates_membership_idx` ON `network_certificates` (`membership_id`);--> statement-breakpoint
CREATE INDEX `network_certificates_not_after_idx` ON `network_certificates` (`not_after`);--> statement-breakpoint
CREATE INDEX `network_certificates_revoked_idx` ON `network_certificates` (`revoked_at`);--> statement-breakpoint
CREATE TABLE `radius_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`person_id` text NOT NULL,
	`application_id` text NOT NULL,
	`client_name` text NOT NULL,
	`acct_session_id` text NOT NULL,
	`nas_address` text NOT NULL,
	`calling_station_id` text,
	`started_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`stopped_at` integer,
	`input_octets` integer DEFAULT 0 NOT NULL,
	`output_octets` integer DEFAULT 0 NOT NULL,
	`session_seconds` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`person_id`) REFERENCES `people`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `radius_sessions_key_uq` ON `radius_sessions` (`application_id`,`nas_address`,`acct_session_id`);--> statement-breakpoint
CREATE INDEX `radius_sessions_person_idx` ON `radius_sessions` (`person_id`,`started_at`,`id`);--> statement-breakpoint
CREATE INDEX `radius_sessions_updated_idx` ON `radius_sessions` (`updated_at`);--> statement-breakpoint
ALTER TABLE `applications` ADD `radius` text;