-- Every application's auth policy gains `mfa`; existing applications keep signing in as before.
UPDATE `applications` SET `auth_policy` = json_set(`auth_policy`, '$.mfa', 'optional') WHERE json_extract(`auth_policy`, '$.mfa') IS NULL;
