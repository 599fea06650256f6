#!/usr/bin/env python3
"""FieldKit's API as a real pynetbox client sees it.

Usage: check.py BASE_URL TOKEN [ADMIN_PASSWORD]

Run by pynetbox_test.go against a started `fieldkit serve` whose database
holds a superuser (TOKEN) and the command logs seeded by the test (see
SEEDED_LOGS there: 7 logs, 2 of them failed, 1 created three days ago, one
failure whose error message starts with "="). Everything else is created
here through pynetbox. Any mismatch raises, so the exit status is non-zero.
"""

import csv
import datetime
import io
import sys

import pynetbox

SEEDED_LOGS = 7
SEEDED_FAILED = 2
SEEDED_TODAY = 6
FORMULA_ERROR = "=HYPERLINK(\"http://example.invalid\")"
CSV_HEADER = [
    "id", "created", "username", "device_id", "device", "command_id", "command",
    "command_type", "success", "execution_duration", "error_message", "sent_command",
    "variables", "credential_set_id", "credential_set", "source", "client_address", "notes",
    "site_id", "site",
]
PAGE_COMMANDS = 120


def check(cond, what, *got):
    if not cond:
        raise AssertionError(what + (": " + repr(got) if got else ""))


def expect_error(status, field, call):
    """call() must raise pynetbox.RequestError with status naming field."""
    try:
        result = call()
        if hasattr(result, "__iter__") and not isinstance(result, (dict, str)):
            list(result)
    except pynetbox.RequestError as e:
        check(e.req.status_code == status, "status for bad input", e.req.status_code, e.error)
        body = e.req.json()
        check(field in body, "error body names " + field, body)
        return body
    raise AssertionError("no RequestError for bad " + field)


def check_api_root(nb):
    check(nb.version == "4.1", "nb.version (API-Version of GET /api/)", nb.version)
    status = nb.status()
    check(isinstance(status, dict) and "netbox-version" in status, "nb.status()", status)
    check(status["plugins"].get("netbox_toolkit_plugin"), "status lists the plugin", status)


def build_inventory(nb):
    site = nb.dcim.sites.create(name="Lab A", slug="lab-a", description="pynetbox")
    ios = nb.dcim.platforms.create(name="Cisco IOS", slug="cisco_ios")
    eos = nb.dcim.platforms.create(name="Arista EOS", slug="eos", driver="arista_eos")
    check(ios.id and eos.id and ios.slug == "cisco_ios", "platforms created", ios, eos)
    check(nb.dcim.platforms.get(slug="eos").driver == "arista_eos", "platform driver read back")
    check(nb.dcim.platforms.count() == 2, "platform count", nb.dcim.platforms.count())

    dev = nb.dcim.devices.create(
        name="r1", site=site.id, platform=ios.id, status="active",
        custom_fields={"ssh_port": 2222})
    check(dev.site.id == site.id and dev.platform.id == ios.id, "device refs", dev.site, dev.platform)
    check(dev.status.value == "active", "device status", dev.status)
    ifc = nb.dcim.interfaces.create(device=dev.id, name="GigabitEthernet0/1", type="1000base-t")
    nb.dcim.interfaces.create(device={"name": "r1"}, name="Loopback0", type="virtual")
    ip = nb.ipam.ip_addresses.create(
        address="192.0.2.10/24", assigned_object_type="dcim.interface",
        assigned_object_id=ifc.id, dns_name="r1.lab.example")
    check(ip.assigned_object_id == ifc.id, "ip assigned to the interface", ip)

    dev.primary_ip4 = ip.id
    dev.description = "edge router"
    check(dev.save(), "device save (PATCH primary_ip4)")
    got = nb.dcim.devices.get(name="r1")
    check(got.primary_ip4.id == ip.id and got.primary_ip4.address == "192.0.2.10/24",
          "primary_ip4 read back", got.primary_ip4)
    check(got.primary_ip.address == "192.0.2.10/24", "primary_ip", got.primary_ip)
    check(got.description == "edge router" and got.custom_fields.get("ssh_port") == 2222,
          "device fields", got.description, got.custom_fields)
    # A nested record loads its full details from its absolute url.
    check(got.platform.slug == "cisco_ios" and got.platform.driver in ("", "cisco_ios"),
          "nested platform full details", dict(got.platform))
    check(nb.dcim.devices.get(dev.id).name == "r1", "device by id")
    names = sorted(i.name for i in nb.dcim.interfaces.filter(device_id=dev.id))
    check(names == ["GigabitEthernet0/1", "Loopback0"], "interfaces of the device", names)
    check(nb.dcim.devices.count(site_id=site.id) == 1, "device count by site")
    # Scripts commonly add exclude=config_context to every device query.
    check([d.name for d in nb.dcim.devices.filter(site_id=site.id, exclude="config_context")] == ["r1"],
          "exclude=config_context")
    check(len(list(nb.dcim.devices.filter(platform_id=[ios.id, eos.id]))) == 1,
          "devices filtered by repeated platform_id")
    expect_error(400, "site", lambda: nb.dcim.devices.create(name="r2", platform=ios.id))
    return ios, eos, dev


def check_commands(nb, ios, eos):
    cmds = nb.plugins.toolkit.commands
    variables = [{
        "name": "interface", "display_name": "Interface", "variable_type": "netbox_interface",
        "required": True, "help_text": "interface to show", "default_value": "",
    }]
    c = cmds.create(
        name="Show interface", command="show interfaces <interface>", command_type="show",
        platforms=[ios.id, eos.id], description="one interface", variables=variables)
    check(c.url.endswith("/api/plugins/toolkit/commands/%d/" % c.id), "command url", c.url)
    check(c.url.startswith("http"), "absolute url", c.url)
    check(len(c.variables) == 1 and c.variables[0].variable_type == "inventory_interface",
          "netbox_interface stored as inventory_interface", c.variables)
    check(sorted(p.slug for p in c.platforms) == ["cisco_ios", "eos"], "platforms read", c.platforms)
    cfg = cmds.create(
        name="Set description", command="interface <intf>\n description <text>", command_type="config",
        platforms=[ios.id], variables=[
            {"name": "intf", "display_name": "Interface", "variable_type": "netbox_interface", "required": True},
            {"name": "text", "display_name": "Text", "variable_type": "text", "required": False,
             "default_value": "set by pynetbox"},
        ])
    gone = cmds.create(name="Temporary", command="show clock", platforms=[eos.id])
    check(gone.command_type == "show", "command_type defaults to show", gone.command_type)

    check(cmds.get(c.id).name == "Show interface", "get by id")
    check(cmds.get(name="Set description").id == cfg.id, "get(name=...)")
    check([x.id for x in cmds.filter(command_type="config")] == [cfg.id], "filter command_type")
    check(cmds.count(platform_id=ios.id) == 2 and cmds.count(platform_id=eos.id) == 2, "count by platform")
    both = sorted(x.id for x in cmds.filter(name=["Show interface", "Temporary"]))
    check(both == sorted([c.id, gone.id]), "repeated name filter ORs", both)
    check(cmds.count(q="descr") == 1, "q search", cmds.count(q="descr"))
    brief = list(cmds.filter(name="Show interface", brief=True))
    check(len(brief) == 1 and brief[0].id == c.id and "variables" not in dict(brief[0]),
          "brief form", [dict(b) for b in brief])

    c.description = "changed by save"
    check(c.save(), "command save")
    check(cmds.get(c.id).description == "changed by save", "PATCH read back")
    old_var_id = cfg.variables[0].id
    check(cfg.update({"variables": [
        {"name": "intf", "display_name": "Port", "variable_type": "netbox_interface", "required": True},
        {"name": "text", "display_name": "Text", "variable_type": "text", "required": True},
    ]}), "command update(variables)")
    got = cmds.get(cfg.id)
    byname = {v.name: v for v in got.variables}
    check(byname["intf"].display_name == "Port" and byname["text"].required is True,
          "variables replaced", got.variables)
    check(byname["intf"].id == old_var_id, "variable ids stay stable", byname["intf"].id, old_var_id)

    check(gone.delete(), "delete")
    check(cmds.get(gone.id) is None, "deleted command is gone")

    expect_error(400, "name", lambda: cmds.create(
        name="x" * 101, command="show version", platforms=[ios.id]))
    expect_error(400, "platforms", lambda: cmds.create(name="No platform", command="show version"))
    expect_error(400, "command", lambda: cmds.create(
        name="Missing var", command="show <what>", platforms=[ios.id]))
    expect_error(400, "bogus_filter", lambda: cmds.filter(bogus_filter=1))
    return c


def check_bulk(nb, ios):
    """NetBox's bulk writes: a list to create, update or delete many objects at once."""
    sites = nb.dcim.sites.create([
        {"name": "Bulk North", "slug": "bulk-north"},
        {"name": "Bulk South", "slug": "bulk-south", "description": "second"},
    ])
    check(isinstance(sites, list) and [x.slug for x in sites] == ["bulk-north", "bulk-south"],
          "sites.create(list) returns the records in order", sites)
    check(all(nb.dcim.sites.get(x.id).name == x.name for x in sites), "bulk-created sites are stored")

    cmds = nb.plugins.toolkit.commands
    made = cmds.create([
        {"name": "Bulk show", "command": "show interfaces <intf>", "platforms": [ios.id],
         "variables": [{"name": "intf", "variable_type": "netbox_interface"}]},
        {"name": "Bulk ping", "command": "ping <dst>", "platforms": [ios.id],
         "variables": [{"name": "dst", "help_text": "address"}]},
    ])
    check(len(made) == 2 and [x.name for x in made] == ["Bulk show", "Bulk ping"], "commands.create(list)", made)
    check(made[0].variables[0].variable_type == "inventory_interface" and made[1].variables[0].name == "dst",
          "bulk-created commands carry their variables", made[0].variables, made[1].variables)

    updated = cmds.update([{"id": made[0].id, "description": "one"}, {"id": made[1].id, "description": "two"}])
    check([x.description for x in updated] == ["one", "two"], "commands.update(list)", updated)
    check(cmds.get(made[1].id).description == "two", "bulk update stored")

    before = cmds.count()
    try:
        cmds.create([{"name": "Bulk ok", "command": "show clock", "platforms": [ios.id]},
                     {"name": "Bulk bad", "command": "show clock"}])
        raise AssertionError("a bulk create with a bad element was accepted")
    except pynetbox.RequestError as e:
        body = e.req.json()
        check(e.req.status_code == 400 and isinstance(body, list) and body[0] == {} and "platforms" in body[1],
              "per-element errors", e.req.status_code, body)
    check(cmds.count() == before, "a failed bulk create writes nothing", cmds.count(), before)

    check(cmds.delete([x.id for x in made]), "commands.delete(ids)")
    check(cmds.count() == before - 2, "bulk delete", cmds.count(), before)
    check(nb.dcim.sites.delete(sites), "sites.delete(records)")
    check(nb.dcim.sites.count(slug=["bulk-north", "bulk-south"]) == 0, "bulk-deleted sites are gone")


def check_pagination(nb, ios):
    cmds = nb.plugins.toolkit.commands
    before = cmds.count()
    # one POST of a list, as NetBox's bulk create
    made = cmds.create([{"name": "bulk-%03d" % i, "command": "show run | include %d" % i, "platforms": [ios.id]}
                        for i in range(PAGE_COMMANDS)])
    check(len(made) == PAGE_COMMANDS, "bulk create of the page commands", len(made))
    total = cmds.count()
    check(total == before + PAGE_COMMANDS, "count after creating", total)
    every = list(cmds.all())
    check(len(every) == total and len({x.id for x in every}) == total, "all() walks every page", len(every))
    names = [x.name for x in cmds.filter(name__isw="bulk-")]
    check(len(names) == PAGE_COMMANDS and names == sorted(names), "filter across pages, ordered by name", len(names))
    page = list(cmds.filter(name__isw="bulk-", limit=25, offset=50))
    check([x.name for x in page] == ["bulk-%03d" % i for i in range(50, 75)], "limit/offset page")
    newest = list(cmds.filter(ordering="-id", limit=3, offset=0))
    check([x.name for x in newest] == ["bulk-119", "bulk-118", "bulk-117"], "ordering=-id")


def check_logs(nb, base, token):
    logs = nb.plugins.toolkit.command_logs
    check(logs.count() == SEEDED_LOGS, "log count", logs.count())
    every = list(logs.all())
    check(len(every) == SEEDED_LOGS, "all logs", len(every))
    failed = list(logs.filter(success=False))
    check(len(failed) == SEEDED_FAILED and all(not x.success for x in failed), "filter success=False")
    one = logs.get(every[0].id)
    check(one.command.name and one.device.name and one.username, "log nested objects", dict(one))
    check(isinstance(one.execution_duration, float), "execution_duration is a float", one.execution_duration)
    dev_ids = sorted({x.device.id for x in every if x.device.id is not None})
    check(len(dev_ids) >= 2, "seeded logs on two devices", dev_ids)
    both = logs.count(device_id=dev_ids[:2])
    check(both == sum(1 for x in every if x.device.id in dev_ids[:2]), "repeated device_id", both)
    expect_error(400, "success", lambda: logs.filter(success="maybe"))
    try:
        logs.create(command=1)
        raise AssertionError("logs accepted a POST")
    except pynetbox.RequestError as e:
        check(e.req.status_code == 405, "POST on logs is 405", e.req.status_code)

    http = nb.http_session
    auth = {"Authorization": "Token " + token, "Accept": "application/json"}
    url = base + "/api/plugins/toolkit/command-logs/"
    stats = http.get(url + "statistics/", headers=auth)
    check(stats.status_code == 200, "statistics status", stats.status_code, stats.text)
    s = stats.json()
    ok = SEEDED_LOGS - SEEDED_FAILED
    check(s["total_logs"] == SEEDED_LOGS, "total_logs", s)
    check(s["success_rate"] == round(ok * 100.0 / SEEDED_LOGS, 2), "success_rate", s["success_rate"])
    check(s["last_24h"]["total"] == SEEDED_TODAY, "last_24h", s["last_24h"])
    check(sum(x["count"] for x in s["top_commands"]) == SEEDED_LOGS, "top_commands", s["top_commands"])
    check(any(e["error"] == FORMULA_ERROR for e in s["common_errors"]), "common_errors", s["common_errors"])

    js = http.get(url + "export/", headers=auth, params={"format": "json"})
    check(js.status_code == 200, "json export", js.status_code, js.text)
    j = js.json()
    check(j["count"] == SEEDED_LOGS == len(j["results"]), "json export count", j["count"])
    check({"id", "command", "device", "username", "success", "created"} <= set(j["results"][0]),
          "json export fields", j["results"][0])
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    j = http.get(url + "export/", headers=auth,
                 params={"format": "json", "start_date": today, "end_date": today}).json()
    check(j["count"] == SEEDED_TODAY, "export start_date/end_date", j["count"])
    bad = http.get(url + "export/", headers=auth, params={"start_date": "yesterday"})
    check(bad.status_code == 400 and "start_date" in bad.json(), "bad date", bad.status_code, bad.text)

    cs = http.get(url + "export/", headers=auth, params={"format": "csv", "success": "false"})
    check(cs.status_code == 200, "csv export", cs.status_code, cs.text)
    check(cs.headers.get("Content-Disposition", "").startswith("attachment;"), "csv download",
          cs.headers.get("Content-Disposition"))
    rows = list(csv.reader(io.StringIO(cs.content.decode("utf-8"), newline="")))
    check(rows[0] == CSV_HEADER, "csv header", rows[0])
    check(len(rows) == 1 + SEEDED_FAILED, "csv rows", len(rows))
    errs = [r[CSV_HEADER.index("error_message")] for r in rows[1:]]
    check("'" + FORMULA_ERROR in errs, "formula cell prefixed with a quote", errs)
    for r in rows[1:]:
        check(r[CSV_HEADER.index("success")] in ("false", "False", "0"), "csv success column", r)
        for cell in r:
            check(not cell or cell[0] not in "=+-@\t", "formula-safe cell", cell)

    # RFC 4180 record ends, and the byte order mark Excel needs, read back exactly.
    check(cs.content.endswith(b"\r\n") and cs.content.count(b"\r\n") == len(rows),
          "csv records end with CRLF", cs.content[-20:])
    bom = http.get(url + "export/", headers=auth,
                   params={"format": "csv", "success": "false", "bom": "true"})
    check(bom.content == b"\xef\xbb\xbf" + cs.content, "bom=true adds exactly the BOM", bom.content[:10])
    rows_bom = list(csv.reader(io.StringIO(bom.content.decode("utf-8-sig"), newline="")))
    check(rows_bom == rows, "a BOM file reads back the same rows", rows_bom)
    bad = http.get(url + "export/", headers=auth, params={"format": "json", "bom": "true"})
    check(bad.status_code == 400 and "bom" in bad.json(), "bom with json", bad.status_code, bad.text)


def check_netbox_clients(nb, base, password):
    """What NetBox clients beyond FieldKit's own use: choices() from OPTIONS,
    create_token() with a password, the read-only NetBox object types."""
    statuses = [c["value"] for c in nb.dcim.devices.choices()["status"]]
    check("active" in statuses and "offline" in statuses, "devices.choices() status", statuses)
    modes = [c["value"] for c in nb.dcim.interfaces.choices()["mode"]]
    check("access" in modes, "interfaces.choices() mode", modes)
    check(list(nb.dcim.regions.all()) == [], "regions are an empty list")
    check(nb.virtualization.virtual_machines.count() == 0, "no virtual machines")
    if not password:
        return
    fresh = pynetbox.api(base)
    made = fresh.create_token("admin", password)
    check(fresh.token == made.key and len(made.key) == 40, "create_token sets the key", made.key)
    check(fresh.dcim.sites.count() >= 1, "the provisioned token reads the inventory")
    try:
        pynetbox.api(base).create_token("admin", "not-the-password")
        raise AssertionError("create_token with a wrong password succeeded")
    except pynetbox.RequestError as e:
        check(e.req.status_code == 401, "wrong password is 401", e.req.status_code)


def main():
    base, token = sys.argv[1].rstrip("/"), sys.argv[2]
    password = sys.argv[3] if len(sys.argv) > 3 else ""
    nb = pynetbox.api(base, token=token)
    check_api_root(nb)
    ios, eos, _ = build_inventory(nb)
    check_commands(nb, ios, eos)
    check_bulk(nb, ios)
    check_pagination(nb, ios)
    check_logs(nb, base, token)
    check_netbox_clients(nb, base, password)
    bad = pynetbox.api(base, token="0" * 40)
    try:
        bad.plugins.toolkit.commands.count()
        raise AssertionError("a bad token was accepted")
    except pynetbox.RequestError as e:
        check(e.req.status_code == 401, "bad token is 401", e.req.status_code)
    print("pynetbox check passed")


if __name__ == "__main__":
    main()
