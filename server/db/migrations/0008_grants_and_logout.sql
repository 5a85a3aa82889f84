CREATE TABLE `backchannel_logouts` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`subject` text NOT NULL,
	`session_id` text,
	`reason` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`lease_until` integer,
	`last_attempt_at` integer,
	`last_status_code` integer,
	`last_error` text,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`delivered_at` integer,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `backchannel_logouts_due_idx` ON `backchannel_logouts` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `backchannel_logouts_app_idx` ON `backchannel_logouts` (`application_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `backchannel_logouts_created_idx` ON `backchannel_logouts` (`created_at`);--> statement-breakpoint
CREATE TABLE `device_authorizations` (
	`id` text PRIMARY KEY NOT NULL,
	`device_code_hash` text NOT NULL,
	`user_code_hash` text NOT NULL,
	`application_id` text NOT NULL,
	`scope` text NOT NULL,
	`resource` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`interval` integer NOT NULL,
	`last_polled_at` integer,
	`user_agent` text,
	`ip` text DEFAULT '' NOT NULL,
	`person_id` text,
	`membership_id` text,
	`session_id` text,
	`auth_time` integer,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`person_id`) REFERENCES `people`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`membership_id`) REFERENCES `memberships`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `device_authorizations_device_code_uq` ON `device_authorizations` (`device_code_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `device_authorizations_user_code_uq` ON `device_authorizations` (`user_code_hash`);--> statement-breakpoint
CREATE INDEX `device_authorizations_expires_idx` ON `device_authorizations` (`expires_at`);--> statement-breakpoint
CREATE INDEX `device_authorizations_app_idx` ON `device_authorizations` (`application_id`);--> statement-breakpoint
CREATE INDEX `device_authorizations_person_idx` ON `device_authorizations` (`person_id`);--> statement-breakpoint
CREATE INDEX `device_authorizations_membership_idx` ON `device_authorizations` (`membership_id`);--> statement-breakpoint
CREATE INDEX `device_authorizations_session_idx` ON `device_authorizations` (`session_id`);--> statement-breakpoint
CREATE TABLE `session_clients` (
	`session_id` text NOT NULL,
	`application_id` text NOT NULL,
	`first_issued_at` integer NOT NULL,
	PRIMARY KEY(`session_id`, `application_id`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `session_clients_app_idx` ON `session_clients` (`application_id`);--> statement-breakpoint
ALTER TABLE `applications` ADD `grant_types` text DEFAULT '["authorization_code","refresh_token"]' NOT NULL;--> statement-breakpoint
ALTER TABLE `applications` ADD `backchannel_logout_uri` text;--> statement-breakpoint
ALTER TABLE `applications` ADD `backchannel_logout_session_required` integer DEFAULT true NOT NULL;