CREATE TABLE "saml_logouts" (
	"handle_hash" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"pending" jsonb NOT NULL,
	"awaiting" text,
	"finish" jsonb NOT NULL,
	"complete" boolean NOT NULL,
	"started_at" timestamp (3) with time zone NOT NULL,
	"deadline" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "saml_requests" (
	"handle_hash" text PRIMARY KEY NOT NULL,
	"application_id" text NOT NULL,
	"request_id" text,
	"acs_url" text NOT NULL,
	"relay_state" text,
	"force_authn" boolean NOT NULL,
	"is_passive" boolean NOT NULL,
	"mfa_class" text,
	"name_id_format" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"answered_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "saml_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"application_id" text NOT NULL,
	"person_id" text NOT NULL,
	"name_id" text NOT NULL,
	"name_id_format" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "saml_signing_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"certificate_pem" text NOT NULL,
	"private_key_pem" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"activates_at" timestamp (3) with time zone NOT NULL,
	"retired_at" timestamp (3) with time zone,
	"expires_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "saml_subjects" (
	"application_id" text NOT NULL,
	"person_id" text NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "saml_subjects_application_id_person_id_pk" PRIMARY KEY("application_id","person_id")
);
--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "saml" jsonb;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "saml_entity_id" text;--> statement-breakpoint
ALTER TABLE "saml_sessions" ADD CONSTRAINT "saml_sessions_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "saml_logouts_started_idx" ON "saml_logouts" USING btree ("started_at");--> statement-breakpoint
CREATE INDEX "saml_logouts_awaiting_idx" ON "saml_logouts" USING btree ("awaiting");--> statement-breakpoint
CREATE UNIQUE INDEX "saml_requests_request_uq" ON "saml_requests" USING btree ("application_id","request_id");--> statement-breakpoint
CREATE INDEX "saml_requests_expires_idx" ON "saml_requests" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "saml_sessions_session_app_uq" ON "saml_sessions" USING btree ("session_id","application_id");--> statement-breakpoint
CREATE INDEX "saml_sessions_app_name_idx" ON "saml_sessions" USING btree ("application_id","name_id");--> statement-breakpoint
CREATE INDEX "saml_sessions_person_idx" ON "saml_sessions" USING btree ("person_id");--> statement-breakpoint
CREATE UNIQUE INDEX "saml_subjects_value_uq" ON "saml_subjects" USING btree ("application_id","value");--> statement-breakpoint
CREATE INDEX "saml_subjects_person_idx" ON "saml_subjects" USING btree ("person_id");--> statement-breakpoint
CREATE UNIQUE INDEX "applications_saml_entity_uq" ON "applications" USING btree ("saml_entity_id");