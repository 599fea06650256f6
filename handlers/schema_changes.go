package handlers

// Component schemas of what changed: diffs of two logs' outputs, a command's history
// on a device, config versions and their collection.

func changeSchemas() obj {
	record := described(tAnyObj, "One parsed record: lower-case column to value.")
	records := obj{"type": "array", "items": record}
	logRef := props([]string{"id", "created", "device", "command"}, obj{
		"id": tInt, "url": obj{"type": "string", "format": "uri"}, "created": tTime,
		"device":  props([]string{"id", "name"}, obj{"id": obj{"type": "integer", "nullable": true}, "name": tStr}),
		"command": props([]string{"id", "name"}, obj{"id": obj{"type": "integer", "nullable": true}, "name": tStr}),
	})
	nullTime := obj{"type": "string", "format": "date-time", "nullable": true}
	versionRef := props([]string{"id", "created", "device"}, obj{
		"id": tInt, "url": obj{"type": "string", "format": "uri"}, "created": tTime,
		"device": props([]string{"id", "name"}, obj{"id": obj{"type": "integer", "nullable": true}, "name": tStr}),
	})
	return obj{
		"ConfigChanges": described(obj{"type": "array", "items": props([]string{"command_log_id", "username", "sent_command", "created", "success"}, obj{
			"command_log_id": tInt, "username": tStr, "sent_command": tStr, "created": tTime, "success": tBool,
		})}, "The FieldKit config executions since the previous version was last read; empty with changed_outside true when none."),
		"ConfigFlipping": described(obj{"type": "object", "nullable": true, "properties": obj{
			"removed": obj{"type": "array", "items": tStr}, "added": obj{"type": "array", "items": tStr},
		}}, "The lines that flip: removed and added against the previous version."),
		"ConfigVersionDiff": props([]string{"from", "to", "unified", "secrets_changed"}, obj{
			"from": versionRef, "to": versionRef,
			"unified":         described(tStr, "The unified diff of the two configurations as shown (secrets masked); empty when they are the same."),
			"secrets_changed": described(tBool, "The configurations differ only in secrets the mask hides."),
		}),
		"ConfigRaw": props([]string{"id", "raw"}, obj{"id": tInt, "raw": described(tStr, "The normalised configuration as read, secrets unmasked.")}),
		"ConfigCollectRequest": props([]string{"device_ids", "credential_token"}, obj{
			"device_ids":       obj{"type": "array", "minItems": 1, "maxItems": collectMax, "items": obj{"type": "integer", "minimum": 1}},
			"credential_token": described(tStr, "Token of one of the user's credential sets."),
		}),
		"ConfigCollectResponse": props([]string{"results", "summary"}, obj{
			"results": obj{"type": "array", "items": props([]string{"device_id", "device_name", "status", "version_id", "command_log_id", "reason"}, obj{
				"device_id": tInt, "device_name": tStr,
				"status":         obj{"type": "string", "enum": []any{"stored", "unchanged", "quarantined", "rejected"}},
				"version_id":     obj{"type": "integer", "nullable": true, "description": "the version stored, found unchanged, or the quarantined read"},
				"command_log_id": obj{"type": "integer", "nullable": true, "description": "the collection's log; null when it never ran"},
				"reason":         described(tStr, "why it was quarantined or rejected"),
			})},
			"summary": props([]string{"total", "stored", "unchanged", "quarantined", "rejected"}, obj{
				"total": tInt, "stored": tInt, "unchanged": tInt, "quarantined": tInt, "rejected": tInt}),
		}),
		"ConfigLastGood": props([]string{"count", "results"}, obj{
			"count": tInt,
			"results": obj{"type": "array", "items": props([]string{"device", "site", "last_good", "version_id"}, obj{
				"device":                 props([]string{"id", "name"}, obj{"id": tInt, "url": obj{"type": "string", "format": "uri"}, "name": tStr}),
				"site":                   props([]string{"id", "name"}, obj{"id": obj{"type": "integer", "nullable": true}, "name": tStr}),
				"last_good":              described(nullTime, "the last read that kept or found its configuration; null: never backed up"),
				"version_id":             obj{"type": "integer", "nullable": true},
				"version_created":        nullTime,
				"last_quarantined":       described(nullTime, "its last quarantined read"),
				"last_quarantine_reason": tStr,
			})},
		}),
		"ConfigSearch": props([]string{"count", "results"}, obj{
			"count": tInt,
			"results": obj{"type": "array", "items": props([]string{"version_id", "device", "raw", "lines"}, obj{
				"version_id": tInt, "url": obj{"type": "string", "format": "uri"},
				"device": props([]string{"id", "name"}, obj{"id": obj{"type": "integer", "nullable": true}, "name": tStr}),
				"raw":    described(tBool, "the lines are as read, secrets shown (the user holds view_raw_config on the version)"),
				"lines":  obj{"type": "array", "items": tStr, "description": "the lines that hold the text"},
			})},
		}),
		"CommandLogDiff": props([]string{"from", "to", "unified"}, obj{
			"from":    described(logRef, "The older side: the log `against` names."),
			"to":      described(logRef, "The log of the path."),
			"unified": described(tStr, "The unified diff of the two outputs (3 lines of context); empty when they are equal."),
			"records": described(props([]string{"added", "removed", "changed"}, obj{
				"added": records, "removed": records,
				"changed": obj{"type": "array", "items": props([]string{"key", "from", "to"}, obj{
					"key": described(tAnyObj, "The template's Key values of the record."), "from": record, "to": record,
				})},
			}), "The parsed records compared by the template's Key values (every column when it has none); absent when either log was not parsed."),
		}),
		"CommandHistory": props([]string{"device_id", "command_id", "results"}, obj{
			"device_id": tInt, "command_id": tInt,
			"results": obj{"type": "array", "items": props([]string{"id", "created", "success", "username", "changed"}, obj{
				"id": tInt, "url": obj{"type": "string", "format": "uri"}, "created": tTime, "success": tBool, "username": tStr,
				"notes":     described(tStr, "Why it ran, as its runner said (the log's notes)."),
				"cancelled": described(tBool, "Someone stopped the run (its log's failure.reason is cancelled): not a failure of the device."),
				"changed": obj{"type": "boolean", "nullable": true,
					"description": "The output differs from the successful run before it (false for the first); null for a failed run."},
			})},
		}),
	}
}
