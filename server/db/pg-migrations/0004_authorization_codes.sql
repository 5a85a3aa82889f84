CREATE TABLE "authorization_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"application_id" text NOT NULL,
	"person_id" text NOT NULL,
	"membership_id" text NOT NULL,
	"session_id" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"scope" text NOT NULL,
	"resource" text NOT NULL,
	"code_challenge" text,
	"nonce" text,
	"auth_time" timestamp (3) with time zone NOT NULL,
	"issued_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"spent_at" timestamp (3) with time zone,
	"issued_family_id" text
);
--> statement-breakpoint
CREATE INDEX "authorization_codes_issued_idx" ON "authorization_codes" USING btree ("issued_at");