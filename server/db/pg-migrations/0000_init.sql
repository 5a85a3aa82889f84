CREATE TABLE "activity_daily" (
	"application_id" text NOT NULL,
	"day" integer NOT NULL,
	"sign_ins" integer DEFAULT 0 NOT NULL,
	"failed_sign_ins" integer DEFAULT 0 NOT NULL,
	"active_people" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "activity_daily_application_id_day_pk" PRIMARY KEY("application_id","day")
);
--> statement-breakpoint
CREATE TABLE "activity_people" (
	"day" integer NOT NULL,
	"application_id" text NOT NULL,
	"person_id" text NOT NULL,
	CONSTRAINT "activity_people_day_application_id_person_id_pk" PRIMARY KEY("day","application_id","person_id")
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"application_id" text NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"key_hash" text NOT NULL,
	"scopes" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone,
	"last_used_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "applications" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"audience" text NOT NULL,
	"redirect_uris" jsonb NOT NULL,
	"post_logout_redirect_uris" jsonb,
	"client_type" text NOT NULL,
	"client_secret_hash" text,
	"webhook_url" text,
	"webhook_secret" text,
	"webhook_previous_secret" text,
	"webhook_previous_secret_until" timestamp (3) with time zone,
	"sso_group_id" text,
	"auth_policy" jsonb NOT NULL,
	"grant_types" jsonb DEFAULT '["authorization_code","refresh_token"]'::jsonb NOT NULL,
	"backchannel_logout_uri" text,
	"backchannel_logout_session_required" boolean DEFAULT true NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" text PRIMARY KEY NOT NULL,
	"at" timestamp (3) with time zone NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"application_id" text,
	"target" text,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "backchannel_logouts" (
	"id" text PRIMARY KEY NOT NULL,
	"application_id" text NOT NULL,
	"subject" text NOT NULL,
	"session_id" text,
	"reason" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone NOT NULL,
	"lease_until" timestamp (3) with time zone,
	"last_attempt_at" timestamp (3) with time zone,
	"last_status_code" integer,
	"last_error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "device_authorizations" (
	"id" text PRIMARY KEY NOT NULL,
	"device_code_hash" text NOT NULL,
	"user_code_hash" text NOT NULL,
	"application_id" text NOT NULL,
	"scope" text NOT NULL,
	"resource" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"interval" integer NOT NULL,
	"last_polled_at" timestamp (3) with time zone,
	"user_agent" text,
	"ip" text DEFAULT '' NOT NULL,
	"person_id" text,
	"membership_id" text,
	"session_id" text,
	"auth_time" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "invitations" (
	"id" text PRIMARY KEY NOT NULL,
	"application_id" text NOT NULL,
	"email" text NOT NULL,
	"role" text NOT NULL,
	"message" text,
	"token_hash" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"invited_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"accepted_at" timestamp (3) with time zone,
	"accepted_by" text,
	"revoked_at" timestamp (3) with time zone,
	"email_sent" boolean DEFAULT false NOT NULL,
	"email_error" text,
	"last_sent_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "linked_accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"person_id" text NOT NULL,
	"provider" text NOT NULL,
	"provider_account_id" text NOT NULL,
	"email" text NOT NULL,
	"linked_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "memberships" (
	"id" text PRIMARY KEY NOT NULL,
	"application_id" text NOT NULL,
	"person_id" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"role" text DEFAULT 'member' NOT NULL,
	"profile" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"joined_at" timestamp (3) with time zone NOT NULL,
	"last_active_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "meta" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "one_time_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"person_id" text NOT NULL,
	"purpose" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"used_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "passkeys" (
	"id" text PRIMARY KEY NOT NULL,
	"person_id" text NOT NULL,
	"credential_id" text NOT NULL,
	"public_key" text NOT NULL,
	"counter" integer DEFAULT 0 NOT NULL,
	"transports" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"device_type" text NOT NULL,
	"backed_up" boolean DEFAULT false NOT NULL,
	"aaguid" text,
	"name" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "people" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"email_verified" boolean DEFAULT false NOT NULL,
	"name" text,
	"password_hash" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "provider_logins" (
	"state" text PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"code_verifier" text NOT NULL,
	"nonce" text,
	"return_to" text,
	"application_id" text,
	"link_person_id" text,
	"identity" jsonb,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "purge_jobs" (
	"kind" text NOT NULL,
	"target" text NOT NULL,
	"params" jsonb NOT NULL,
	"actor" text NOT NULL,
	"requested_at" timestamp (3) with time zone NOT NULL,
	"removed" jsonb NOT NULL,
	CONSTRAINT "purge_jobs_kind_target_pk" PRIMARY KEY("kind","target")
);
--> statement-breakpoint
CREATE TABLE "recovery_codes" (
	"id" text PRIMARY KEY NOT NULL,
	"person_id" text NOT NULL,
	"code_hash" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"used_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "refresh_token_families" (
	"id" text PRIMARY KEY NOT NULL,
	"application_id" text NOT NULL,
	"person_id" text NOT NULL,
	"membership_id" text,
	"session_id" text,
	"scope" text NOT NULL,
	"resource" text NOT NULL,
	"auth_time" timestamp (3) with time zone NOT NULL,
	"amr" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"revoked_at" timestamp (3) with time zone,
	"revoked_reason" text
);
--> statement-breakpoint
CREATE TABLE "refresh_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"family_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"rotated_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "revoked_access_tokens" (
	"jti" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"revoked_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "row_counts" (
	"name" text PRIMARY KEY NOT NULL,
	"n" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "second_factor_back_off" (
	"person_id" text PRIMARY KEY NOT NULL,
	"failures" integer NOT NULL,
	"locked_until" timestamp (3) with time zone,
	"last_failure_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "session_clients" (
	"session_id" text NOT NULL,
	"application_id" text NOT NULL,
	"first_issued_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "session_clients_session_id_application_id_pk" PRIMARY KEY("session_id","application_id")
);
--> statement-breakpoint
CREATE TABLE "session_realms" (
	"session_id" text NOT NULL,
	"realm" text NOT NULL,
	"authenticated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "session_realms_session_id_realm_pk" PRIMARY KEY("session_id","realm")
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"person_id" text NOT NULL,
	"user_agent" text,
	"device" text DEFAULT 'Unknown device' NOT NULL,
	"ip" text DEFAULT '' NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"last_seen_at" timestamp (3) with time zone NOT NULL,
	"revoked_at" timestamp (3) with time zone,
	"amr" jsonb DEFAULT '[]'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sign_in_back_off" (
	"email_hash" text PRIMARY KEY NOT NULL,
	"failures" integer NOT NULL,
	"locked_until" timestamp (3) with time zone,
	"last_failure_at" timestamp (3) with time zone NOT NULL,
	"notified_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"alg" text DEFAULT 'RS256' NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"private_key_pem" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"retired_at" timestamp (3) with time zone,
	"expires_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "sso_groups" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "totp_credentials" (
	"person_id" text PRIMARY KEY NOT NULL,
	"secret" text,
	"confirmed_at" timestamp (3) with time zone,
	"pending_secret" text,
	"pending_created_at" timestamp (3) with time zone,
	"last_used_step" integer DEFAULT 0 NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"application_id" text NOT NULL,
	"type" text NOT NULL,
	"payload" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone NOT NULL,
	"lease_until" timestamp (3) with time zone,
	"last_attempt_at" timestamp (3) with time zone,
	"last_status_code" integer,
	"last_error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "applications" ADD CONSTRAINT "applications_sso_group_id_sso_groups_id_fk" FOREIGN KEY ("sso_group_id") REFERENCES "public"."sso_groups"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "backchannel_logouts" ADD CONSTRAINT "backchannel_logouts_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_authorizations" ADD CONSTRAINT "device_authorizations_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_authorizations" ADD CONSTRAINT "device_authorizations_person_id_people_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."people"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_authorizations" ADD CONSTRAINT "device_authorizations_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_authorizations" ADD CONSTRAINT "device_authorizations_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invitations" ADD CONSTRAINT "invitations_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invitations" ADD CONSTRAINT "invitations_accepted_by_people_id_fk" FOREIGN KEY ("accepted_by") REFERENCES "public"."people"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "linked_accounts" ADD CONSTRAINT "linked_accounts_person_id_people_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."people"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_person_id_people_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."people"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "one_time_tokens" ADD CONSTRAINT "one_time_tokens_person_id_people_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."people"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "passkeys" ADD CONSTRAINT "passkeys_person_id_people_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."people"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recovery_codes" ADD CONSTRAINT "recovery_codes_person_id_people_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."people"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refresh_token_families" ADD CONSTRAINT "refresh_token_families_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refresh_token_families" ADD CONSTRAINT "refresh_token_families_person_id_people_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."people"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refresh_token_families" ADD CONSTRAINT "refresh_token_families_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refresh_token_families" ADD CONSTRAINT "refresh_token_families_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refresh_tokens" ADD CONSTRAINT "refresh_tokens_family_id_refresh_token_families_id_fk" FOREIGN KEY ("family_id") REFERENCES "public"."refresh_token_families"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "second_factor_back_off" ADD CONSTRAINT "second_factor_back_off_person_id_people_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."people"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_clients" ADD CONSTRAINT "session_clients_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_clients" ADD CONSTRAINT "session_clients_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_realms" ADD CONSTRAINT "session_realms_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_person_id_people_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."people"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "totp_credentials" ADD CONSTRAINT "totp_credentials_person_id_people_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."people"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "activity_daily_day_idx" ON "activity_daily" USING btree ("day");--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_uq" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_app_created_idx" ON "api_keys" USING btree ("application_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "applications_audience_uq" ON "applications" USING btree ("audience");--> statement-breakpoint
CREATE INDEX "applications_created_idx" ON "applications" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "applications_group_idx" ON "applications" USING btree ("sso_group_id");--> statement-breakpoint
CREATE INDEX "audit_log_at_idx" ON "audit_log" USING btree ("at","id");--> statement-breakpoint
CREATE INDEX "audit_log_app_idx" ON "audit_log" USING btree ("application_id","at","id");--> statement-breakpoint
CREATE INDEX "audit_log_action_idx" ON "audit_log" USING btree ("action","at","id");--> statement-breakpoint
CREATE INDEX "audit_log_actor_idx" ON "audit_log" USING btree ("actor","at","id");--> statement-breakpoint
CREATE INDEX "backchannel_logouts_due_idx" ON "backchannel_logouts" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "backchannel_logouts_app_idx" ON "backchannel_logouts" USING btree ("application_id","created_at","id");--> statement-breakpoint
CREATE INDEX "backchannel_logouts_created_idx" ON "backchannel_logouts" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "device_authorizations_device_code_uq" ON "device_authorizations" USING btree ("device_code_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "device_authorizations_user_code_uq" ON "device_authorizations" USING btree ("user_code_hash");--> statement-breakpoint
CREATE INDEX "device_authorizations_expires_idx" ON "device_authorizations" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "device_authorizations_app_idx" ON "device_authorizations" USING btree ("application_id");--> statement-breakpoint
CREATE INDEX "device_authorizations_person_idx" ON "device_authorizations" USING btree ("person_id");--> statement-breakpoint
CREATE INDEX "device_authorizations_membership_idx" ON "device_authorizations" USING btree ("membership_id");--> statement-breakpoint
CREATE INDEX "device_authorizations_session_idx" ON "device_authorizations" USING btree ("session_id");--> statement-breakpoint
CREATE UNIQUE INDEX "invitations_token_uq" ON "invitations" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "invitations_app_created_idx" ON "invitations" USING btree ("application_id","created_at","id");--> statement-breakpoint
CREATE INDEX "invitations_app_email_idx" ON "invitations" USING btree ("application_id","email");--> statement-breakpoint
CREATE INDEX "invitations_accepted_by_idx" ON "invitations" USING btree ("accepted_by");--> statement-breakpoint
CREATE INDEX "invitations_state_expires_idx" ON "invitations" USING btree ("state","expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "linked_accounts_provider_uq" ON "linked_accounts" USING btree ("provider","provider_account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "linked_accounts_person_provider_uq" ON "linked_accounts" USING btree ("person_id","provider");--> statement-breakpoint
CREATE UNIQUE INDEX "memberships_app_person_uq" ON "memberships" USING btree ("application_id","person_id");--> statement-breakpoint
CREATE INDEX "memberships_app_joined_idx" ON "memberships" USING btree ("application_id","joined_at","id");--> statement-breakpoint
CREATE INDEX "memberships_app_status_idx" ON "memberships" USING btree ("application_id","status","joined_at","id");--> statement-breakpoint
CREATE INDEX "memberships_app_role_idx" ON "memberships" USING btree ("application_id","role","joined_at","id");--> statement-breakpoint
CREATE INDEX "memberships_person_idx" ON "memberships" USING btree ("person_id");--> statement-breakpoint
CREATE INDEX "one_time_tokens_person_idx" ON "one_time_tokens" USING btree ("person_id","purpose");--> statement-breakpoint
CREATE INDEX "one_time_tokens_expires_idx" ON "one_time_tokens" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "passkeys_credential_uq" ON "passkeys" USING btree ("credential_id");--> statement-breakpoint
CREATE INDEX "passkeys_person_idx" ON "passkeys" USING btree ("person_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "people_email_uq" ON "people" USING btree ("email");--> statement-breakpoint
CREATE INDEX "people_created_idx" ON "people" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "provider_logins_expires_idx" ON "provider_logins" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "recovery_codes_person_idx" ON "recovery_codes" USING btree ("person_id");--> statement-breakpoint
CREATE INDEX "rtf_person_app_idx" ON "refresh_token_families" USING btree ("person_id","application_id");--> statement-breakpoint
CREATE INDEX "rtf_session_idx" ON "refresh_token_families" USING btree ("session_id");--> statement-breakpoint
CREATE INDEX "rtf_app_idx" ON "refresh_token_families" USING btree ("application_id");--> statement-breakpoint
CREATE INDEX "rtf_membership_idx" ON "refresh_token_families" USING btree ("membership_id");--> statement-breakpoint
CREATE INDEX "rtf_expires_idx" ON "refresh_token_families" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "rtf_revoked_idx" ON "refresh_token_families" USING btree ("revoked_at");--> statement-breakpoint
CREATE INDEX "refresh_tokens_family_idx" ON "refresh_tokens" USING btree ("family_id");--> statement-breakpoint
CREATE INDEX "revoked_access_tokens_expires_idx" ON "revoked_access_tokens" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "second_factor_back_off_last_failure_idx" ON "second_factor_back_off" USING btree ("last_failure_at");--> statement-breakpoint
CREATE INDEX "session_clients_app_idx" ON "session_clients" USING btree ("application_id");--> statement-breakpoint
CREATE INDEX "session_realms_realm_idx" ON "session_realms" USING btree ("realm");--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_token_uq" ON "sessions" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "sessions_person_idx" ON "sessions" USING btree ("person_id","created_at");--> statement-breakpoint
CREATE INDEX "sessions_expires_idx" ON "sessions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "sessions_revoked_idx" ON "sessions" USING btree ("revoked_at");--> statement-breakpoint
CREATE INDEX "sign_in_back_off_last_failure_idx" ON "sign_in_back_off" USING btree ("last_failure_at");--> statement-breakpoint
CREATE INDEX "sso_groups_created_idx" ON "sso_groups" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_app_idx" ON "webhook_deliveries" USING btree ("application_id","created_at","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_created_idx" ON "webhook_deliveries" USING btree ("created_at");