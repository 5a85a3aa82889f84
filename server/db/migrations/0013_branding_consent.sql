CREATE TABLE `application_logos` (
	`application_id` text PRIMARY KEY NOT NULL,
	`content_type` text NOT NULL,
	`data` blob NOT NULL,
	`version` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `consents` (
	`membership_id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`scope` text NOT NULL,
	`granted_at` integer NOT NULL,
	`last_used_at` integer NOT NULL,
	FOREIGN KEY (`membership_id`) REFERENCES `memberships`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `consents_app_idx` ON `consents` (`application_id`);--> statement-breakpoint
CREATE INDEX `consents_last_used_idx` ON `consents` (`last_used_at`);--> statement-breakpoint
ALTER TABLE `applications` ADD `brand_accent_color` text;--> statement-breakpoint
ALTER TABLE `applications` ADD `brand_logo` text;--> statement-breakpoint
ALTER TABLE `applications` ADD `consent` text DEFAULT 'implicit' NOT NULL;