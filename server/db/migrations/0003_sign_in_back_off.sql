CREATE TABLE `sign_in_back_off` (
	`email_hash` text PRIMARY KEY NOT NULL,
	`failures` integer NOT NULL,
	`locked_until` integer,
	`last_failure_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sign_in_back_off_last_failure_idx` ON `sign_in_back_off` (`last_failure_at`);--> statement-breakpoint
ALTER TABLE `people` DROP COLUMN `failed_sign_ins`;--> statement-breakpoint
ALTER TABLE `people` DROP COLUMN `locked_until`;