CREATE TABLE "directory_entries" (
	"source_id" text NOT NULL,
	"kind" text NOT NULL,
	"entry_key" text NOT NULL,
	"target_id" text NOT NULL,
	"digest" text NOT NULL,
	"disabled" boolean NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "directory_entries_source_id_kind_entry_key_pk" PRIMARY KEY("source_id","kind","entry_key")
);
--> statement-breakpoint
CREATE TABLE "directory_sources" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"url" text NOT NULL,
	"start_tls" boolean NOT NULL,
	"allow_plain" boolean NOT NULL,
	"ca_certificate" text,
	"bind_dn" text,
	"bind_password_sealed" text,
	"people_base" text NOT NULL,
	"people_filter" text NOT NULL,
	"groups_base" text,
	"groups_filter" text NOT NULL,
	"attributes" jsonb NOT NULL,
	"disabled_filter" text,
	"sync_interval_minutes" integer,
	"applications" jsonb NOT NULL,
	"status" text NOT NULL,
	"last_error" text,
	"last_sync_at" timestamp (3) with time zone,
	"last_full_sync_at" timestamp (3) with time zone,
	"change_mark" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "directory_sync_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"source_id" text NOT NULL,
	"state" text NOT NULL,
	"full" boolean NOT NULL,
	"trigger" text NOT NULL,
	"counts" jsonb NOT NULL,
	"conflicts" jsonb NOT NULL,
	"skipped" jsonb NOT NULL,
	"error" text,
	"started_at" timestamp (3) with time zone NOT NULL,
	"finished_at" timestamp (3) with time zone,
	"heartbeat_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "groups" ADD COLUMN "source_id" text;--> statement-breakpoint
ALTER TABLE "groups" ADD COLUMN "source_dn" text;--> statement-breakpoint
ALTER TABLE "people" ADD COLUMN "source_id" text;--> statement-breakpoint
ALTER TABLE "people" ADD COLUMN "source_dn" text;--> statement-breakpoint
ALTER TABLE "directory_entries" ADD CONSTRAINT "directory_entries_source_id_directory_sources_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."directory_sources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "directory_sync_runs" ADD CONSTRAINT "directory_sync_runs_source_id_directory_sources_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."directory_sources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "directory_entries_target_uq" ON "directory_entries" USING btree ("kind","target_id");--> statement-breakpoint
CREATE INDEX "directory_sources_created_idx" ON "directory_sources" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "directory_sync_runs_source_idx" ON "directory_sync_runs" USING btree ("source_id","started_at");--> statement-breakpoint
CREATE INDEX "directory_sync_runs_started_idx" ON "directory_sync_runs" USING btree ("started_at");--> statement-breakpoint
CREATE INDEX "people_source_idx" ON "people" USING btree ("source_id","status");