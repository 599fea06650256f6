#!/usr/bin/env python3
"""Webhooks and event rules made with pynetbox, as on NetBox 4.

Usage: webhooks.py BASE_URL TOKEN RECEIVER_URL SECRET

Run by webhooks_clients_test.go against a started `fieldkit serve`. It makes a
webhook (signed with SECRET) and an event rule that sends it when an execution
fails, the NetBox 4 way, reads them back, filters, updates and describes them,
and prints the webhook's and the rule's ids as JSON. Any mismatch raises.
"""

import json
import sys

import pynetbox


def check(cond, what, *got):
    if not cond:
        raise AssertionError(what + (": " + repr(got) if got else ""))


def main():
    base, token, receiver, secret = sys.argv[1:5]
    nb = pynetbox.api(base, token=token)

    hook = nb.extras.webhooks.create(
        name="NOC failures",
        payload_url=receiver,
        http_method="POST",
        http_content_type="application/json",
        additional_headers="X-Source: fieldkit\nX-Device: {{ data.device.name }}",
        body_template='{"text": "{{ data.command.name }} failed on {{ data.device.name }}", "log": {{ data.id }}, '
        '"state": "{{ state }}", "error": {{ data.error_message | tojson }}}',
        secret=secret,
        ssl_verification=True,
    )
    check(hook.id and hook.name == "NOC failures", "webhook created", dict(hook))
    check(hook.secret == "********", "the secret reads back masked", hook.secret)
    check(hook.http_method == "POST" and hook.ca_file_path is None, "defaults", dict(hook))

    rule = nb.extras.event_rules.create(
        name="Failed executions",
        object_types=["netbox_toolkit_plugin.commandlog"],
        event_types=["object_created"],
        enabled=True,
        conditions={"and": [{"attr": "success", "value": False}, {"attr": "command.name", "value": "Bogus"}]},
        action_type="webhook",
        action_object_type="extras.webhook",
        action_object_id=hook.id,
        description="tell the NOC",
    )
    check(rule.id and rule.action_type.value == "webhook", "event rule created", dict(rule))
    check(rule.action_object.id == hook.id and rule.action_object.name == "NOC failures", "action_object", dict(rule))
    check(rule.object_types == ["netbox_toolkit_plugin.commandlog"], "object_types", rule.object_types)

    # Read back, filter, update as scripts do.
    check(nb.extras.webhooks.get(name="NOC failures").id == hook.id, "get by name")
    check([r.id for r in nb.extras.event_rules.filter(enabled=True)] == [rule.id], "filter enabled")
    got = nb.extras.event_rules.get(rule.id)
    got.description = "tell the NOC at once"
    check(got.save(), "save of a changed rule")
    check(nb.extras.event_rules.get(rule.id).description == "tell the NOC at once", "the change is kept")
    choices = nb.extras.event_rules.choices()
    check("job_failed" in [c["value"] for c in choices["event_types"]], "event_types choices", choices.get("event_types"))

    # A wrong one is refused, naming the field.
    try:
        nb.extras.event_rules.create(name="x", object_types=["dcim.site"], event_types=["object_created"],
                                     action_type="webhook", action_object_type="extras.webhook", action_object_id=hook.id)
    except pynetbox.RequestError as e:
        check(e.req.status_code == 400 and "object_types" in e.req.json(), "refused object type", e.error)
    else:
        raise AssertionError("an event rule on dcim.site was accepted")

    print(json.dumps({"webhook": hook.id, "rule": rule.id}))


if __name__ == "__main__":
    main()
