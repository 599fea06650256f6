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
	return obj{
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
				"cancelled": described(tBool, "Someone stopped the run (its log's failure.reason is cancelled): not a failure of the device."),
				"changed": obj{"type": "boolean", "nullable": true,
					"description": "The output differs from the successful run before it (false for the first); null for a failed run."},
			})},
		}),
	}
}
