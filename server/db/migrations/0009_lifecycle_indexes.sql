CREATE TABLE `purge_jobs` (
	`kind` text NOT NULL,
	`target` text NOT NULL,
	`params` text NOT NULL,
	`actor` text NOT NULL,
	`requested_at` integer NOT NULL,
	`removed` text NOT NULL,
	PRIMARY KEY(`kind`, `target`)
);
--> statement-breakpoint
CREATE TABLE `row_counts` (
	`name` text PRIMARY KEY NOT NULL,
	`n` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `invitations_accepted_by_idx` ON `invitations` (`accepted_by`);--> statement-breakpoint
CREATE INDEX `invitations_state_expires_idx` ON `invitations` (`state`,`expires_at`);--> statement-breakpoint
CREATE INDEX `one_time_tokens_expires_idx` ON `one_time_tokens` (`expires_at`);--> statement-breakpoint
CREATE INDEX `provider_logins_expires_idx` ON `provider_logins` (`expires_at`);--> statement-breakpoint
CREATE INDEX `rtf_app_idx` ON `refresh_token_families` (`application_id`);--> statement-breakpoint
CREATE INDEX `rtf_membership_idx` ON `refresh_token_families` (`membership_id`);--> statement-breakpoint
CREATE INDEX `rtf_expires_idx` ON `refresh_token_families` (`expires_at`);--> statement-breakpoint
CREATE INDEX `rtf_revoked_idx` ON `refresh_token_families` (`revoked_at`);--> statement-breakpoint
CREATE INDEX `session_realms_realm_idx` ON `session_realms` (`realm`);--> statement-breakpoint
CREATE INDEX `sessions_expires_idx` ON `sessions` (`expires_at`);--> statement-breakpoint
CREATE INDEX `sessions_revoked_idx` ON `sessions` (`revoked_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_created_idx` ON `webhook_deliveries` (`created_at`);