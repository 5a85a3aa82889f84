CREATE TABLE "application_logos" (
	"application_id" text PRIMARY KEY NOT NULL,
	"content_type" text NOT NULL,
	"data" "bytea" NOT NULL,
	"version" text NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "consents" (
	"membership_id" text PRIMARY KEY NOT NULL,
	"application_id" text NOT NULL,
	"scope" text NOT NULL,
	"granted_at" timestamp (3) with time zone NOT NULL,
	"last_used_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "brand_accent_color" text;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "brand_logo" text;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "consent" text DEFAULT 'implicit' NOT NULL;--> statement-breakpoint
ALTER TABLE "application_logos" ADD CONSTRAINT "application_logos_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "consents" ADD CONSTRAINT "consents_membership_id_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."memberships"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "consents" ADD CONSTRAINT "consents_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "consents_app_idx" ON "consents" USING btree ("application_id");--> statement-breakpoint
CREATE INDEX "consents_last_used_idx" ON "consents" USING btree ("last_used_at");