-- Hosts follow identity: the hosts projection is also fed by identity's user events (a user
-- invited through the API becomes a host). The version of the user it last applied lets a
-- redelivered or late event never overwrite a newer name; hosts written by the sandbox or a
-- builder start at 0, so identity's first event about them wins.
ALTER TABLE scheduling.hosts ADD COLUMN identity_version bigint NOT NULL DEFAULT 0;
