CREATE TABLE `app_passwords` (
	`id` text PRIMARY KEY NOT NULL,
	`person_id` text NOT NULL,
	`application_id` text NOT NULL,
	`membership_id` text NOT NULL,
	`name` text NOT NULL,
	`secret_hash` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`last_used_at` integer,
	FOREIGN KEY (`person_id`) REFERENCES `people`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`membership_id`) REFERENCES `memberships`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `app_passwords_secret_uq` ON `app_passwords` (`secret_hash`);--> statement-breakpoint
CREATE INDEX `app_passwords_person_idx` ON `app_passwords` (`person_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `app_passwords_app_idx` ON `app_passwords` (`application_id`);--> statement-breakpoint
CREATE INDEX `app_passwords_membership_idx` ON `app_passwords` (`membership_id`);--> statement-breakpoint
ALTER TABLE `applications` ADD `ldap` text DEFAULT '{"enabled":false}' NOT NULL;--> statement-breakpoint
ALTER TABLE `applications` ADD `ldap_password_hash` text;