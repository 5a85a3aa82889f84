DROP INDEX `sessions_revoked_idx`;--> statement-breakpoint
CREATE INDEX `sessions_revoked_expires_idx` ON `sessions` (`revoked_at`,`expires_at`);