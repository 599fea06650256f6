-- The generation: one number that changes with every committed change to anything a
-- request's checks read (users, groups, tokens, permissions, credential sets, commands,
-- the inventory), whichever process made it: a trigger on each such table bumps it in
-- the writing transaction. The server caches what those checks look up and reads this
-- one row per request; a different number empties the cache (store/cache.go).
--
-- Not counted: the command logs and their counters and search indexes (written by every
-- execution, read by no check), web sessions, export runs, a NetBox sync's staging (its
-- apply writes the inventory's tables), and the last_used stamps of tokens and credential
-- sets (written at most once a minute by the requests themselves).
CREATE TABLE generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
);
INSERT INTO generation (id, n) VALUES (1, 1);

CREATE TRIGGER clusters_gen_ai AFTER INSERT ON clusters BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER clusters_gen_au AFTER UPDATE ON clusters BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER clusters_gen_ad AFTER DELETE ON clusters BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER command_platforms_gen_ai AFTER INSERT ON command_platforms BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER command_platforms_gen_au AFTER UPDATE ON command_platforms BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER command_platforms_gen_ad AFTER DELETE ON command_platforms BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER command_tags_gen_ai AFTER INSERT ON command_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER command_tags_gen_au AFTER UPDATE ON command_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER command_tags_gen_ad AFTER DELETE ON command_tags BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER command_variables_gen_ai AFTER INSERT ON command_variables BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER command_variables_gen_au AFTER UPDATE ON command_variables BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER command_variables_gen_ad AFTER DELETE ON command_variables BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER commands_gen_ai AFTER INSERT ON commands BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER commands_gen_au AFTER UPDATE ON commands BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER commands_gen_ad AFTER DELETE ON commands BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER credential_set_platforms_gen_ai AFTER INSERT ON credential_set_platforms BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER credential_set_platforms_gen_au AFTER UPDATE ON credential_set_platforms BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER credential_set_platforms_gen_ad AFTER DELETE ON credential_set_platforms BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER credential_sets_gen_ai AFTER INSERT ON credential_sets BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER credential_sets_gen_au AFTER UPDATE ON credential_sets WHEN OLD.last_used IS NEW.last_used BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER credential_sets_gen_ad AFTER DELETE ON credential_sets BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER device_roles_gen_ai AFTER INSERT ON device_roles BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER device_roles_gen_au AFTER UPDATE ON device_roles BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER device_roles_gen_ad AFTER DELETE ON device_roles BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER device_tags_gen_ai AFTER INSERT ON device_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER device_tags_gen_au AFTER UPDATE ON device_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER device_tags_gen_ad AFTER DELETE ON device_tags BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER device_types_gen_ai AFTER INSERT ON device_types BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER device_types_gen_au AFTER UPDATE ON device_types BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER device_types_gen_ad AFTER DELETE ON device_types BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER devices_gen_ai AFTER INSERT ON devices BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER devices_gen_au AFTER UPDATE ON devices BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER devices_gen_ad AFTER DELETE ON devices BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER groups_gen_ai AFTER INSERT ON groups BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER groups_gen_au AFTER UPDATE ON groups BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER groups_gen_ad AFTER DELETE ON groups BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER interface_tagged_vlans_gen_ai AFTER INSERT ON interface_tagged_vlans BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER interface_tagged_vlans_gen_au AFTER UPDATE ON interface_tagged_vlans BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER interface_tagged_vlans_gen_ad AFTER DELETE ON interface_tagged_vlans BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER interface_tags_gen_ai AFTER INSERT ON interface_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER interface_tags_gen_au AFTER UPDATE ON interface_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER interface_tags_gen_ad AFTER DELETE ON interface_tags BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER interfaces_gen_ai AFTER INSERT ON interfaces BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER interfaces_gen_au AFTER UPDATE ON interfaces BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER interfaces_gen_ad AFTER DELETE ON interfaces BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER ip_address_tags_gen_ai AFTER INSERT ON ip_address_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER ip_address_tags_gen_au AFTER UPDATE ON ip_address_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER ip_address_tags_gen_ad AFTER DELETE ON ip_address_tags BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER ip_addresses_gen_ai AFTER INSERT ON ip_addresses BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER ip_addresses_gen_au AFTER UPDATE ON ip_addresses BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER ip_addresses_gen_ad AFTER DELETE ON ip_addresses BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER locations_gen_ai AFTER INSERT ON locations BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER locations_gen_au AFTER UPDATE ON locations BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER locations_gen_ad AFTER DELETE ON locations BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER manufacturers_gen_ai AFTER INSERT ON manufacturers BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER manufacturers_gen_au AFTER UPDATE ON manufacturers BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER manufacturers_gen_ad AFTER DELETE ON manufacturers BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER object_permissions_gen_ai AFTER INSERT ON object_permissions BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER object_permissions_gen_au AFTER UPDATE ON object_permissions BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER object_permissions_gen_ad AFTER DELETE ON object_permissions BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER permission_groups_gen_ai AFTER INSERT ON permission_groups BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER permission_groups_gen_au AFTER UPDATE ON permission_groups BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER permission_groups_gen_ad AFTER DELETE ON permission_groups BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER permission_users_gen_ai AFTER INSERT ON permission_users BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER permission_users_gen_au AFTER UPDATE ON permission_users BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER permission_users_gen_ad AFTER DELETE ON permission_users BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER platform_tags_gen_ai AFTER INSERT ON platform_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER platform_tags_gen_au AFTER UPDATE ON platform_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER platform_tags_gen_ad AFTER DELETE ON platform_tags BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER platforms_gen_ai AFTER INSERT ON platforms BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER platforms_gen_au AFTER UPDATE ON platforms BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER platforms_gen_ad AFTER DELETE ON platforms BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER prefixes_gen_ai AFTER INSERT ON prefixes BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER prefixes_gen_au AFTER UPDATE ON prefixes BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER prefixes_gen_ad AFTER DELETE ON prefixes BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER racks_gen_ai AFTER INSERT ON racks BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER racks_gen_au AFTER UPDATE ON racks BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER racks_gen_ad AFTER DELETE ON racks BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER regions_gen_ai AFTER INSERT ON regions BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER regions_gen_au AFTER UPDATE ON regions BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER regions_gen_ad AFTER DELETE ON regions BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER services_gen_ai AFTER INSERT ON services BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER services_gen_au AFTER UPDATE ON services BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER services_gen_ad AFTER DELETE ON services BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER site_groups_gen_ai AFTER INSERT ON site_groups BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER site_groups_gen_au AFTER UPDATE ON site_groups BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER site_groups_gen_ad AFTER DELETE ON site_groups BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER site_tags_gen_ai AFTER INSERT ON site_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER site_tags_gen_au AFTER UPDATE ON site_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER site_tags_gen_ad AFTER DELETE ON site_tags BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER sites_gen_ai AFTER INSERT ON sites BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER sites_gen_au AFTER UPDATE ON sites BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER sites_gen_ad AFTER DELETE ON sites BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER tags_gen_ai AFTER INSERT ON tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER tags_gen_au AFTER UPDATE ON tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER tags_gen_ad AFTER DELETE ON tags BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER tenants_gen_ai AFTER INSERT ON tenants BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER tenants_gen_au AFTER UPDATE ON tenants BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER tenants_gen_ad AFTER DELETE ON tenants BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER tokens_gen_ai AFTER INSERT ON tokens BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER tokens_gen_au AFTER UPDATE ON tokens WHEN OLD.last_used IS NEW.last_used BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER tokens_gen_ad AFTER DELETE ON tokens BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER user_groups_gen_ai AFTER INSERT ON user_groups BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER user_groups_gen_au AFTER UPDATE ON user_groups BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER user_groups_gen_ad AFTER DELETE ON user_groups BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER users_gen_ai AFTER INSERT ON users BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER users_gen_au AFTER UPDATE ON users BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER users_gen_ad AFTER DELETE ON users BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER virtual_machines_gen_ai AFTER INSERT ON virtual_machines BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER virtual_machines_gen_au AFTER UPDATE ON virtual_machines BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER virtual_machines_gen_ad AFTER DELETE ON virtual_machines BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER vlan_tags_gen_ai AFTER INSERT ON vlan_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER vlan_tags_gen_au AFTER UPDATE ON vlan_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER vlan_tags_gen_ad AFTER DELETE ON vlan_tags BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER vlans_gen_ai AFTER INSERT ON vlans BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER vlans_gen_au AFTER UPDATE ON vlans BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER vlans_gen_ad AFTER DELETE ON vlans BEGIN UPDATE generation SET n = n + 1; END;

CREATE TRIGGER vm_interfaces_gen_ai AFTER INSERT ON vm_interfaces BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER vm_interfaces_gen_au AFTER UPDATE ON vm_interfaces BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER vm_interfaces_gen_ad AFTER DELETE ON vm_interfaces BEGIN UPDATE generation SET n = n + 1; END;
