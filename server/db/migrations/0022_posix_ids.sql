CREATE TABLE `posix_id_sequence` (
	`name` text PRIMARY KEY NOT NULL,
	`next_value` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `groups` ADD `gid_number` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `groups_gid_number_uq` ON `groups` (`gid_number`);--> statement-breakpoint
ALTER TABLE `people` ADD `uid_number` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `people_uid_number_uq` ON `people` (`uid_number`);
--> statement-breakpoint
-- uidNumber and gidNumber for the LDAP directory (spec ldap.md, server/ldap/): stable numbers from
-- 10000 up, from one sequence people and groups share (so a person's user-private group number,
-- their uidNumber, is never a group's gidNumber), never reused. Existing people are numbered
-- oldest first, then existing groups; `posix_id_sequence` holds the next number. New rows get
-- theirs from the triggers below, in the inserting transaction, whatever code inserts them.
UPDATE `people` SET `uid_number` = r.n FROM (SELECT `id`, 9999 + row_number() OVER (ORDER BY `created_at`, `id`) AS n FROM `people`) AS r WHERE r.`id` = `people`.`id`;
--> statement-breakpoint
UPDATE `groups` SET `gid_number` = r.n FROM (SELECT `id`, 9999 + (SELECT count(*) FROM `people`) + row_number() OVER (ORDER BY `created_at`, `id`) AS n FROM `groups`) AS r WHERE r.`id` = `groups`.`id`;
--> statement-breakpoint
INSERT INTO `posix_id_sequence` (`name`, `next_value`) VALUES ('posix', 10000 + (SELECT count(*) FROM `people`) + (SELECT count(*) FROM `groups`));
--> statement-breakpoint
CREATE TRIGGER `people_uid_number` AFTER INSERT ON `people` WHEN NEW.`uid_number` IS NULL BEGIN
  UPDATE `posix_id_sequence` SET `next_value` = `next_value` + 1 WHERE `name` = 'posix';
  UPDATE `people` SET `uid_number` = (SELECT `next_value` - 1 FROM `posix_id_sequence` WHERE `name` = 'posix') WHERE `rowid` = NEW.`rowid`;
END;
--> statement-breakpoint
CREATE TRIGGER `groups_gid_number` AFTER INSERT ON `groups` WHEN NEW.`gid_number` IS NULL BEGIN
  UPDATE `posix_id_sequence` SET `next_value` = `next_value` + 1 WHERE `name` = 'posix';
  UPDATE `groups` SET `gid_number` = (SELECT `next_value` - 1 FROM `posix_id_sequence` WHERE `name` = 'posix') WHERE `rowid` = NEW.`rowid`;
END;
