ALTER TABLE `applications` ADD `allowed_groups` text;--> statement-breakpoint
-- Forward auth's own group list becomes the application's group rule, which every protocol honours
-- (decision 0450): its groups move to `allowed_groups`, and `forward_auth` keeps its hosts and `basic`.
UPDATE `applications` SET `allowed_groups` = json(json_extract(`forward_auth`, '$.groups')) WHERE json_type(`forward_auth`, '$.groups') = 'array' AND json_array_length(`forward_auth`, '$.groups') > 0;--> statement-breakpoint
UPDATE `applications` SET `forward_auth` = json_remove(`forward_auth`, '$.groups') WHERE json_type(`forward_auth`) = 'object';--> statement-breakpoint
-- What a preset applied moves the same way, so a preset upgrade sees no difference the move made.
UPDATE `applications` SET `preset` = json_set(`preset`, '$.applied.allowedGroups', json(json_extract(`preset`, '$.applied.forwardAuth.groups'))) WHERE json_type(`preset`, '$.applied.forwardAuth.groups') = 'array' AND json_array_length(`preset`, '$.applied.forwardAuth.groups') > 0;--> statement-breakpoint
UPDATE `applications` SET `preset` = json_remove(`preset`, '$.applied.forwardAuth.groups') WHERE json_type(`preset`, '$.applied.forwardAuth') = 'object';
