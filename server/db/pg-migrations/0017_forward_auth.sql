CREATE TABLE "forward_auth_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"application_id" text NOT NULL,
	"session_id" text NOT NULL,
	"person_id" text NOT NULL,
	"host" text NOT NULL,
	"rd" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "forward_auth_hosts" (
	"host" text PRIMARY KEY NOT NULL,
	"application_id" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "forward_auth_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"session_id" text NOT NULL,
	"application_id" text NOT NULL,
	"person_id" text NOT NULL,
	"host" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "forward_auth" jsonb;--> statement-breakpoint
ALTER TABLE "forward_auth_sessions" ADD CONSTRAINT "forward_auth_sessions_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "forward_auth_codes_expires_idx" ON "forward_auth_codes" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "forward_auth_hosts_app_idx" ON "forward_auth_hosts" USING btree ("application_id");--> statement-breakpoint
CREATE UNIQUE INDEX "forward_auth_sessions_token_uq" ON "forward_auth_sessions" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "forward_auth_sessions_session_idx" ON "forward_auth_sessions" USING btree ("session_id");--> statement-breakpoint
CREATE INDEX "forward_auth_sessions_person_app_idx" ON "forward_auth_sessions" USING btree ("person_id","application_id");--> statement-breakpoint
CREATE INDEX "forward_auth_sessions_app_idx" ON "forward_auth_sessions" USING btree ("application_id");--> statement-breakpoint
CREATE INDEX "forward_auth_sessions_expires_idx" ON "forward_auth_sessions" USING btree ("expires_at");