ALTER TABLE "applications" ADD COLUMN "unknown_scopes" text DEFAULT 'reject' NOT NULL;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "groups_filter" jsonb;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "custom_claims" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "resource_servers" jsonb DEFAULT '[]'::jsonb NOT NULL;