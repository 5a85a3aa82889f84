CREATE TABLE `activity_daily` (
	`application_id` text NOT NULL,
	`day` integer NOT NULL,
	`sign_ins` integer DEFAULT 0 NOT NULL,
	`failed_sign_ins` integer DEFAULT 0 NOT NULL,
	`active_people` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`application_id`, `day`)
);
--> statement-breakpoint
CREATE INDEX `activity_daily_day_idx` ON `activity_daily` (`day`);--> statement-breakpoint
CREATE TABLE `activity_people` (
	`day` integer NOT NULL,
	`application_id` text NOT NULL,
	`person_id` text NOT NULL,
	PRIMARY KEY(`day`, `application_id`, `person_id`)
);
--> statement-breakpoint
CREATE INDEX `audit_log_action_idx` ON `audit_log` (`action`,`at`,`id`);--> statement-breakpoint
CREATE INDEX `audit_log_actor_idx` ON `audit_log` (`actor`,`at`,`id`);