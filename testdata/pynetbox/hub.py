#!/usr/bin/env python3
"""A FieldKit hub's command logs as a NOC user's pynetbox sees them.

Usage: hub.py BASE_URL TOKEN [--site-filters] [--q=TEXT]... SLUG:SITE_ID...

Run by hub_noc_test.go against a hub with several sites. Prints one JSON object, which the
test judges:
- count: the count the API states for command_logs;
- logs: every log pynetbox's paging of command_logs.all() yields (id, device id, created,
  the slug of its site or None);
- device_site: the site slug of each device the token may see;
- sites: for each SLUG:SITE_ID, the ids of the logs listed by the site's devices
  (device_id=...), and with --site-filters by site=SLUG and by site_id=SITE_ID, with
  the counts the API states for those; and the ids of the commands and platforms
  listed by site=SLUG and site_id=SITE_ID, with their counts;
- commands: every command the token may see (id, the slug of its site or None);
- platforms: every platform the token may see (id, slug, the slugs of its sites);
- q: for each --q=TEXT, the ids of the logs listed by filter(q=TEXT) and the count the
  API states for it.
"""

import json
import sys

import pynetbox


def ids(records):
    return sorted(r.id for r in records)


def main():
    args = sys.argv[1:]
    site_filters = "--site-filters" in args
    searches = [a[len("--q="):] for a in args if a.startswith("--q=")]
    args = [a for a in args if a != "--site-filters" and not a.startswith("--q=")]
    base, token, sites = args[0], args[1], args[2:]
    nb = pynetbox.api(base, token=token)
    logs = nb.plugins.toolkit.command_logs
    device_site = {d.id: d.site.slug for d in nb.dcim.devices.all()}
    out = {
        "count": logs.count(),
        "logs": [{"id": l.id, "device": l.device.id if l.device else None, "created": l.created,
                  "site": l.site.slug if l.site else None} for l in logs.all()],
        "device_site": device_site,
        "sites": {},
        "q": {q: {"ids": ids(logs.filter(q=q)), "count": logs.count(q=q)} for q in searches},
    }
    for arg in sites:
        slug, site_id = arg.split(":")
        devices = [d for d, s in device_site.items() if s == slug]
        # An empty device_id list would filter nothing: no device seen, no log listed.
        entry = {"by_device": ids(logs.filter(device_id=devices)) if devices else []}
        if site_filters:
            entry["by_site"] = ids(logs.filter(site=slug))
            entry["by_site_id"] = ids(logs.filter(site_id=int(site_id)))
            entry["count_site"] = logs.count(site=slug)
            entry["count_site_id"] = logs.count(site_id=int(site_id))
        for name, endpoint in (("commands", nb.plugins.toolkit.commands), ("platforms", nb.dcim.platforms)):
            entry[name] = {
                "by_site": ids(endpoint.filter(site=slug)),
                "by_site_id": ids(endpoint.filter(site_id=int(site_id))),
                "count_site": endpoint.count(site=slug),
                "count_site_id": endpoint.count(site_id=int(site_id)),
            }
        out["sites"][slug] = entry
    out["commands"] = [{"id": c.id, "site": c.site.slug if c.site else None} for c in nb.plugins.toolkit.commands.all()]
    out["platforms"] = [{"id": p.id, "slug": p.slug, "sites": sorted(s.slug for s in p.sites)} for p in nb.dcim.platforms.all()]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
