CREATE TABLE `administrator_applications` (
	`person_id` text NOT NULL,
	`application_id` text NOT NULL,
	PRIMARY KEY(`person_id`, `application_id`),
	FOREIGN KEY (`person_id`) REFERENCES `administrators`(`person_id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `administrator_applications_app_idx` ON `administrator_applications` (`application_id`);--> statement-breakpoint
CREATE TABLE `administrators` (
	`person_id` text PRIMARY KEY NOT NULL,
	`role` text NOT NULL,
	`granted_by` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`person_id`) REFERENCES `people`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `administrators_role_idx` ON `administrators` (`role`,`person_id`);--> statement-breakpoint
ALTER TABLE `people` ADD `status` text DEFAULT 'active' NOT NULL;