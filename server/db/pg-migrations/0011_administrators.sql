CREATE TABLE "administrator_applications" (
	"person_id" text NOT NULL,
	"application_id" text NOT NULL,
	CONSTRAINT "administrator_applications_person_id_application_id_pk" PRIMARY KEY("person_id","application_id")
);
--> statement-breakpoint
CREATE TABLE "administrators" (
	"person_id" text PRIMARY KEY NOT NULL,
	"role" text NOT NULL,
	"granted_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "app_passwords" DROP CONSTRAINT "app_passwords_person_id_people_id_fk";
--> statement-breakpoint
ALTER TABLE "device_authorizations" DROP CONSTRAINT "device_authorizations_person_id_people_id_fk";
--> statement-breakpoint
ALTER TABLE "group_members" DROP CONSTRAINT "group_members_person_id_people_id_fk";
--> statement-breakpoint
ALTER TABLE "invitations" DROP CONSTRAINT "invitations_accepted_by_people_id_fk";
--> statement-breakpoint
ALTER TABLE "linked_accounts" DROP CONSTRAINT "linked_accounts_person_id_people_id_fk";
--> statement-breakpoint
ALTER TABLE "memberships" DROP CONSTRAINT "memberships_person_id_people_id_fk";
--> statement-breakpoint
ALTER TABLE "one_time_tokens" DROP CONSTRAINT "one_time_tokens_person_id_people_id_fk";
--> statement-breakpoint
ALTER TABLE "passkeys" DROP CONSTRAINT "passkeys_person_id_people_id_fk";
--> statement-breakpoint
ALTER TABLE "pending_sign_ins" DROP CONSTRAINT "pending_sign_ins_person_id_people_id_fk";
--> statement-breakpoint
ALTER TABLE "recovery_codes" DROP CONSTRAINT "recovery_codes_person_id_people_id_fk";
--> statement-breakpoint
ALTER TABLE "refresh_token_families" DROP CONSTRAINT "refresh_token_families_person_id_people_id_fk";
--> statement-breakpoint
ALTER TABLE "second_factor_back_off" DROP CONSTRAINT "second_factor_back_off_person_id_people_id_fk";
--> statement-breakpoint
ALTER TABLE "sessions" DROP CONSTRAINT "sessions_person_id_people_id_fk";
--> statement-breakpoint
ALTER TABLE "totp_credentials" DROP CONSTRAINT "totp_credentials_person_id_people_id_fk";
--> statement-breakpoint
ALTER TABLE "people" ADD COLUMN "status" text DEFAULT 'active' NOT NULL;--> statement-breakpoint
ALTER TABLE "administrator_applications" ADD CONSTRAINT "administrator_applications_person_id_administrators_person_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."administrators"("person_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "administrator_applications_app_idx" ON "administrator_applications" USING btree ("application_id");--> statement-breakpoint
CREATE INDEX "administrators_role_idx" ON "administrators" USING btree ("role","person_id");