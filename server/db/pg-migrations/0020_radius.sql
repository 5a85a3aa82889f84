CREATE TABLE "network_certificates" (
	"id" text PRIMARY KEY NOT NULL,
	"person_id" text NOT NULL,
	"application_id" text NOT NULL,
	"membership_id" text NOT NULL,
	"name" text NOT NULL,
	"serial" text NOT NULL,
	"fingerprint" text NOT NULL,
	"not_after" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp (3) with time zone,
	"last_used_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "radius_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"person_id" text NOT NULL,
	"application_id" text NOT NULL,
	"client_name" text NOT NULL,
	"acct_session_id" text NOT NULL,
	"nas_address" text NOT NULL,
	"calling_station_id" text,
	"started_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"stopped_at" timestamp (3) with time zone,
	"input_octets" integer DEFAULT 0 NOT NULL,
	"output_octets" integer DEFAULT 0 NOT NULL,
	"session_seconds" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "radius" jsonb;--> statement-breakpoint
CREATE UNIQUE INDEX "network_certificates_fingerprint_uq" ON "network_certificates" USING btree ("fingerprint");--> statement-breakpoint
CREATE INDEX "network_certificates_person_idx" ON "network_certificates" USING btree ("person_id","created_at","id");--> statement-breakpoint
CREATE INDEX "network_certificates_app_idx" ON "network_certificates" USING btree ("application_id");--> statement-breakpoint
CREATE INDEX "network_certificates_membership_idx" ON "network_certificates" USING btree ("membership_id");--> statement-breakpoint
CREATE INDEX "network_certificates_not_after_idx" ON "network_certificates" USING btree ("not_after");--> statement-breakpoint
CREATE INDEX "network_certificates_revoked_idx" ON "network_certificates" USING btree ("revoked_at");--> statement-breakpoint
CREATE UNIQUE INDEX "radius_sessions_key_uq" ON "radius_sessions" USING btree ("application_id","nas_address","acct_session_id");--> statement-breakpoint
CREATE INDEX "radius_sessions_person_idx" ON "radius_sessions" USING btree ("person_id","started_at","id");--> statement-breakpoint
CREATE INDEX "radius_sessions_updated_idx" ON "radius_sessions" USING btree ("updated_at");