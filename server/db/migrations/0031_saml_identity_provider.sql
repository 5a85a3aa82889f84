CREATE TABLE `saml_logouts` (
	`handle_hash` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`pending` text NOT NULL,
	`awaiting` text,
	`finish` text NOT NULL,
	`complete` integer NOT NULL,
	`started_at` integer NOT NULL,
	`deadline` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `saml_logouts_started_idx` ON `saml_logouts` (`started_at`);--> statement-breakpoint
CREATE INDEX `saml_logouts_awaiting_idx` ON `saml_logouts` (`awaiting`);--> statement-breakpoint
CREATE TABLE `saml_requests` (
	`handle_hash` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`request_id` text,
	`acs_url` text NOT NULL,
	`relay_state` text,
	`force_authn` integer NOT NULL,
	`is_passive` integer NOT NULL,
	`mfa_class` text,
	`name_id_format` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`answered_at` integer,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `saml_requests_request_uq` ON `saml_requests` (`application_id`,`request_id`);--> statement-breakpoint
CREATE INDEX `saml_requests_expires_idx` ON `saml_requests` (`expires_at`);--> statement-breakpoint
CREATE TABLE `saml_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`application_id` text NOT NULL,
	`person_id` text NOT NULL,
	`name_id` text NOT NULL,
	`name_id_format` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`ended_at` integer,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`person_id`) REFERENCES `people`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `saml_sessions_session_app_uq` ON `saml_sessions` (`session_id`,`application_id`);--> statement-breakpoint
CREATE INDEX `saml_sessions_app_name_idx` ON `saml_sessions` (`application_id`,`name_id`);--> statement-breakpoint
CREATE INDEX `saml_sessions_person_idx` ON `saml_sessions` (`person_id`);--> statement-breakpoint
CREATE TABLE `saml_signing_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`certificate_pem` text NOT NULL,
	`private_key_pem` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`activates_at` integer NOT NULL,
	`retired_at` integer,
	`expires_at` integer
);
--> statement-breakpoint
CREATE TABLE `saml_subjects` (
	`application_id` text NOT NULL,
	`person_id` text NOT NULL,
	`value` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	PRIMARY KEY(`application_id`, `person_id`),
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`person_id`) REFERENCES `people`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `saml_subjects_value_uq` ON `saml_subjects` (`application_id`,`value`);--> statement-breakpoint
CREATE INDEX `saml_subjects_person_idx` ON `saml_subjects` (`person_id`);--> statement-breakpoint
ALTER TABLE `applications` ADD `saml` text;--> statement-breakpoint
ALTER TABLE `applications` ADD `saml_entity_id` text;--> statement-breakpoint
CREATE UNIQUE INDEX `applications_saml_entity_uq` ON `applications` (`saml_entity_id`);