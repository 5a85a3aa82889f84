ALTER TABLE "applications" ADD COLUMN "allowed_groups" jsonb;--> statement-breakpoint
-- Forward auth's own group list becomes the application's group rule, which every protocol honours
-- (decision 0450): its groups move to "allowed_groups", and "forward_auth" keeps its hosts and "basic".
UPDATE "applications" SET "allowed_groups" = "forward_auth"->'groups' WHERE jsonb_typeof("forward_auth"->'groups') = 'array' AND jsonb_array_length("forward_auth"->'groups') > 0;--> statement-breakpoint
UPDATE "applications" SET "forward_auth" = "forward_auth" - 'groups' WHERE jsonb_typeof("forward_auth") = 'object';--> statement-breakpoint
-- What a preset applied moves the same way, so a preset upgrade sees no difference the move made.
UPDATE "applications" SET "preset" = jsonb_set("preset", '{applied,allowedGroups}', "preset"->'applied'->'forwardAuth'->'groups') WHERE jsonb_typeof("preset"->'applied'->'forwardAuth'->'groups') = 'array' AND jsonb_array_length("preset"->'applied'->'forwardAuth'->'groups') > 0;--> statement-breakpoint
UPDATE "applications" SET "preset" = "preset" #- '{applied,forwardAuth,groups}' WHERE jsonb_typeof("preset"->'applied'->'forwardAuth') = 'object';
