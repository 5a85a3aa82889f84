ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_application_id_applications_id_fk";
--> statement-breakpoint
ALTER TABLE "application_logos" DROP CONSTRAINT "application_logos_application_id_applications_id_fk";
--> statement-breakpoint
ALTER TABLE "backchannel_logouts" DROP CONSTRAINT "backchannel_logouts_application_id_applications_id_fk";
--> statement-breakpoint
ALTER TABLE "consents" DROP CONSTRAINT "consents_membership_id_memberships_id_fk";
--> statement-breakpoint
ALTER TABLE "consents" DROP CONSTRAINT "consents_application_id_applications_id_fk";
--> statement-breakpoint
ALTER TABLE "device_authorizations" DROP CONSTRAINT "device_authorizations_application_id_applications_id_fk";
--> statement-breakpoint
ALTER TABLE "device_authorizations" DROP CONSTRAINT "device_authorizations_membership_id_memberships_id_fk";
--> statement-breakpoint
ALTER TABLE "invitations" DROP CONSTRAINT "invitations_application_id_applications_id_fk";
--> statement-breakpoint
ALTER TABLE "memberships" DROP CONSTRAINT "memberships_application_id_applications_id_fk";
--> statement-breakpoint
ALTER TABLE "refresh_token_families" DROP CONSTRAINT "refresh_token_families_application_id_applications_id_fk";
--> statement-breakpoint
ALTER TABLE "refresh_token_families" DROP CONSTRAINT "refresh_token_families_membership_id_memberships_id_fk";
--> statement-breakpoint
ALTER TABLE "session_clients" DROP CONSTRAINT "session_clients_application_id_applications_id_fk";
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_application_id_applications_id_fk";
