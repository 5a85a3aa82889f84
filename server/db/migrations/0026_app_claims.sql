ALTER TABLE `applications` ADD `unknown_scopes` text DEFAULT 'reject' NOT NULL;--> statement-breakpoint
ALTER TABLE `applications` ADD `groups_filter` text;--> statement-breakpoint
ALTER TABLE `applications` ADD `custom_claims` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `applications` ADD `resource_servers` text DEFAULT '[]' NOT NULL;