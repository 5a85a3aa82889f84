CREATE TABLE "app_passwords" (
	"id" text PRIMARY KEY NOT NULL,
	"person_id" text NOT NULL,
	"application_id" text NOT NULL,
	"membership_id" text NOT NULL,
	"name" text NOT NULL,
	"secret_hash" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "ldap" jsonb DEFAULT '{"enabled":false}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "ldap_password_hash" text;--> statement-breakpoint
ALTER TABLE "app_passwords" ADD CONSTRAINT "app_passwords_person_id_people_id_fk" FOREIGN KEY ("person_id") REFERENCES "public"."people"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "app_passwords_secret_uq" ON "app_passwords" USING btree ("secret_hash");--> statement-breakpoint
CREATE INDEX "app_passwords_person_idx" ON "app_passwords" USING btree ("person_id","created_at","id");--> statement-breakpoint
CREATE INDEX "app_passwords_app_idx" ON "app_passwords" USING btree ("application_id");--> statement-breakpoint
CREATE INDEX "app_passwords_membership_idx" ON "app_passwords" USING btree ("membership_id");