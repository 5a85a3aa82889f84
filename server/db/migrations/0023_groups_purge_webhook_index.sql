-- Directory webhook events (group.created, …) find the applications with a webhook through an index (decision 0101).
CREATE INDEX `applications_webhook_idx` ON `applications` (`webhook_url`);