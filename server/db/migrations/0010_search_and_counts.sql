-- Member search (members/queries.ts): a trigram full-text index over people's e-mail and name, so
-- `q` (a substring) is answered from the index instead of reading every member. External content:
-- the text stays in `people`; these triggers keep the index in step. A migration that rebuilds
-- `people` (new rowids) must end with: INSERT INTO people_search(people_search) VALUES ('rebuild').
CREATE VIRTUAL TABLE `people_search` USING fts5(email, name, content='people', content_rowid='rowid', tokenize='trigram');
--> statement-breakpoint
CREATE TRIGGER `people_search_insert` AFTER INSERT ON `people` BEGIN
  INSERT INTO people_search(rowid, email, name) VALUES (new.rowid, new.email, new.name);
END;
--> statement-breakpoint
CREATE TRIGGER `people_search_delete` AFTER DELETE ON `people` BEGIN
  INSERT INTO people_search(people_search, rowid, email, name) VALUES ('delete', old.rowid, old.email, old.name);
END;
--> statement-breakpoint
CREATE TRIGGER `people_search_update` AFTER UPDATE OF email, name ON `people` BEGIN
  INSERT INTO people_search(people_search, rowid, email, name) VALUES ('delete', old.rowid, old.email, old.name);
  INSERT INTO people_search(rowid, email, name) VALUES (new.rowid, new.email, new.name);
END;
--> statement-breakpoint
INSERT INTO people_search(people_search) VALUES ('rebuild');
--> statement-breakpoint
-- Row counts of the tables that grow (the overview, `gatehouse status`), kept by triggers in the
-- writing transaction, so nothing ever counts a table. Counted once here.
INSERT INTO `row_counts` (name, n) SELECT 'people', count(*) FROM people;
--> statement-breakpoint
INSERT INTO `row_counts` (name, n) SELECT 'memberships', count(*) FROM memberships;
--> statement-breakpoint
CREATE TRIGGER `row_counts_people_insert` AFTER INSERT ON `people` BEGIN
  UPDATE row_counts SET n = n + 1 WHERE name = 'people';
END;
--> statement-breakpoint
CREATE TRIGGER `row_counts_people_delete` AFTER DELETE ON `people` BEGIN
  UPDATE row_counts SET n = n - 1 WHERE name = 'people';
END;
--> statement-breakpoint
CREATE TRIGGER `row_counts_memberships_insert` AFTER INSERT ON `memberships` BEGIN
  UPDATE row_counts SET n = n + 1 WHERE name = 'memberships';
END;
--> statement-breakpoint
CREATE TRIGGER `row_counts_memberships_delete` AFTER DELETE ON `memberships` BEGIN
  UPDATE row_counts SET n = n - 1 WHERE name = 'memberships';
END;
