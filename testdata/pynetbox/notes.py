#!/usr/bin/env python3
"""A run's notes as a pynetbox script meets them.

Usage: notes.py BASE_URL TOKEN COMMAND_ID DEVICE_ID CREDENTIAL_TOKEN

Run by pynetbox_test.go (TestPynetboxNotes) against a started `fieldkit serve`
whose superuser holds TOKEN and CREDENTIAL_TOKEN, with a show command that runs on
a simulated device. It executes the command with notes (one execution, then a
bulk request), finds the log by a word of its notes, edits the notes with
save() and update(), is refused a change of anything else, and checks who may
edit: a user who views logs only is refused (403) until granted change. It
prints the first log's id as JSON. Any mismatch raises.
"""

import json
import sys

import pynetbox
from pynetbox.core.endpoint import DetailEndpoint
from pynetbox.core.query import Request

NOTE = "pre-change OSPF config, CHG4242"


def check(cond, what, *got):
    if not cond:
        raise AssertionError(what + (": " + repr(got) if got else ""))


def refused(status, field, call):
    try:
        call()
    except pynetbox.RequestError as e:
        check(e.req.status_code == status, "status", e.req.status_code, e.error)
        if field:
            check(field in e.req.json(), "the error names " + field, e.req.json())
        return
    raise AssertionError("no RequestError (want %d)" % status)


def main():
    base, token, cmd_id, device_id, cred = sys.argv[1:6]
    nb = pynetbox.api(base, token=token)
    logs = nb.plugins.toolkit.command_logs
    cmd = nb.plugins.toolkit.commands.get(int(cmd_id))

    # An execution is a detail route of its command, as pynetbox reaches NetBox's own.
    execute = DetailEndpoint(cmd, "execute")
    res = execute.create({"device_id": int(device_id), "credential_token": cred, "notes": NOTE})
    check(res["success"] is True and res["command_log_id"], "execute", res)
    log = logs.get(res["command_log_id"])
    check(log.notes == NOTE, "the log keeps the notes", log.notes)
    found = list(logs.filter(q="CHG4242"))
    check([x.id for x in found] == [log.id], "q finds the log by its notes", [x.id for x in found])
    refused(400, "notes", lambda: execute.create({"device_id": int(device_id), "credential_token": cred, "notes": "x" * 1001}))

    bulk = Request(base=nb.plugins.toolkit.commands.url + "/bulk-execute/", token=token,
                   http_session=nb.http_session).post({
        "notes": "nightly audit",
        "executions": [{"command_id": int(cmd_id), "device_id": int(device_id), "credential_token": cred}]})
    check(bulk["summary"]["successful"] == 1, "bulk-execute", bulk)
    check(logs.get(bulk["results"][0]["command_log_id"]).notes == "nightly audit", "the bulk run keeps the notes")

    # Edited afterwards: save() sends what changed, update() what it is given.
    log.notes = "after the fact: rolled back"
    check(log.save(), "save() of the notes")
    check(logs.get(log.id).notes == "after the fact: rolled back", "the saved notes read back")
    check(log.update({"notes": NOTE + " (reviewed)"}), "update() of the notes")
    check(logs.get(log.id).notes == NOTE + " (reviewed)", "the updated notes read back")
    check(not list(logs.filter(q="rolled")), "q forgets the old notes")
    fresh = logs.get(log.id)
    fresh.success = False
    refused(400, "success", fresh.save)
    check(logs.get(log.id).success is True, "the outcome stays as it ran")

    # Who may edit: another user who views logs is refused until granted change.
    bob = nb.users.users.create(username="bob-notes", password="Bob-notes-Pa55")
    key = nb.users.tokens.create(user=bob.id, write_enabled=True).key
    nb.users.permissions.create(name="bob views logs", object_types=["netbox_toolkit_plugin.commandlog"],
                                actions=["view"], users=[bob.id])
    as_bob = pynetbox.api(base, token=key).plugins.toolkit.command_logs
    theirs = as_bob.get(log.id)
    check(theirs.notes == NOTE + " (reviewed)", "bob reads the notes")
    refused(403, None, lambda: theirs.update({"notes": "bob was here"}))
    nb.users.permissions.create(name="bob edits logs", object_types=["netbox_toolkit_plugin.commandlog"],
                                actions=["change"], users=[bob.id])
    check(theirs.update({"notes": "bob was here"}), "bob with change edits the notes")
    check(logs.get(log.id).notes == "bob was here", "bob's notes read back")
    print(json.dumps({"log": log.id}))


if __name__ == "__main__":
    main()
