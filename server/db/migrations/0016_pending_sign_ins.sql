CREATE TABLE `pending_sign_ins` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`person_id` text NOT NULL,
	`application_id` text,
	`first_factor` text NOT NULL,
	`step_up_session_id` text,
	`next` text NOT NULL,
	`finish_link` integer DEFAULT false NOT NULL,
	`device_hash` text NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	`challenge_hash` text,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`person_id`) REFERENCES `people`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `pending_sign_ins_person_idx` ON `pending_sign_ins` (`person_id`);--> statement-breakpoint
CREATE INDEX `pending_sign_ins_expires_idx` ON `pending_sign_ins` (`expires_at`);--> statement-breakpoint
CREATE TABLE `webauthn_challenges` (
	`challenge_hash` text PRIMARY KEY NOT NULL,
	`session_id` text,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webauthn_challenges_session_uq` ON `webauthn_challenges` (`session_id`);--> statement-breakpoint
CREATE INDEX `webauthn_challenges_expires_idx` ON `webauthn_challenges` (`expires_at`);