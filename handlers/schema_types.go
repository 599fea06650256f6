package handlers

import (
	"strings"

	"fieldkit/store"
)

// Component schemas of the non-CRUD endpoints and of the error bodies.

func props(required []string, p obj) obj {
	s := obj{"type": "object", "properties": p}
	if len(required) > 0 {
		s["required"] = anyStrings(required)
	}
	return s
}

var (
	tInt    = obj{"type": "integer"}
	tStr    = obj{"type": "string"}
	tBool   = obj{"type": "boolean"}
	tNum    = obj{"type": "number", "format": "double"}
	tTime   = obj{"type": "string", "format": "date-time"}
	tAnyObj = obj{"type": "object", "additionalProperties": true}
)

// jobURL is a bulk element's job at a hub.
var jobURL = described(obj{"type": "string", "format": "uri"}, "On a hub, for a site's command: the job it ran as (hub-jobs/{id}/).")

// withIncluded adds to a bulk element's properties the fields "include" asks for, each
// null when it does not apply (a rejected element did not run).
func withIncluded(p obj) obj {
	nullable := func(s obj) obj { return obj{"nullable": true, "allOf": []any{s}} }
	p["device"] = nullable(props([]string{"id", "name"}, obj{"id": tInt, "name": obj{"type": "string", "nullable": true}}))
	p["output"] = obj{"type": "string", "nullable": true}
	p["parsed_output"] = nullable(ref("ParsedOutput"))
	p["syntax_error"] = nullable(ref("SyntaxError"))
	p["failure"] = nullable(ref("ExecutionFailure"))
	return p
}

func described(s obj, desc string) obj {
	out := obj{"description": desc}
	for k, v := range s {
		out[k] = v
	}
	return out
}

// keptRefSchema is a reference that outlives its object (a log's command, device, user
// or credential set): its name as it was, with the id while the object exists.
func keptRefSchema(m *store.Model) obj {
	what, name := strings.ToLower(m.Name), m.NameField()
	return props([]string{"id", name, "display"}, obj{
		"id":  obj{"type": "integer", "nullable": true, "description": "null once the " + what + " is deleted"},
		"url": obj{"type": "string", "format": "uri", "description": "absent once the " + what + " is deleted, and for objects the API does not serve"},
		name:  described(tStr, "as it was when the log was written"), "display": tStr,
	})
}

// opSchemas returns a fresh map of the fixed component schemas; resources add theirs.
func opSchemas() obj {
	timeout := obj{"type": "integer", "minimum": 5, "maximum": 300, "default": 30, "description": "Seconds for the whole execution."}
	vars := obj{"type": "object", "description": "Variable name to value; numbers are converted to strings; at most 500 characters, no control characters.",
		"additionalProperties": obj{"oneOf": []any{obj{"type": "string", "maxLength": 500}, tNum}}}
	token := described(tStr, "Token of one of the user's credential sets (shown once in the web UI). Never a username or password.")
	notes := obj{"type": "string", "maxLength": store.MaxNotes,
		"description": "Why the command runs (\"pre-change OSPF config\"), kept on its log and searched by q; may be edited later."}
	s := obj{
		"Detail":      props([]string{"detail"}, obj{"detail": tStr}),
		"ServerError": props([]string{"detail", "request_id"}, obj{"detail": described(tStr, "Internal server error"), "request_id": tStr}),
		"BulkObjectID": obj{"type": "object", "required": []any{"id"}, "additionalProperties": false,
			"properties": obj{"id": obj{"type": "integer", "minimum": 1}}},
		"BulkValidationError": described(obj{"oneOf": []any{ref("ValidationError"), obj{"type": "array", "items": ref("ValidationError")}}},
			"For a list body: one entry per element in request order, {} for a good element, e.g. [{}, {\"name\": [\"This field is required.\"]}]; "+
				"a problem with the list itself (empty, too long, not a list) is one object with non_field_errors."),
		"ValidationError": described(obj{"type": "object", "additionalProperties": true}, "Field name (or non_field_errors) to a list of messages, or to nested errors for nested objects, e.g. {\"name\": [\"This field is required.\"]}."),
		"RateLimitError": props([]string{"error", "details"}, obj{
			"error":   described(tStr, "Rate limit exceeded"),
			"details": ref("RateLimitDetails"),
		}),
		"RateLimitDetails": props([]string{"reason", "current_count", "limit", "time_window_minutes", "retry_after_seconds"}, obj{
			"reason": tStr, "current_count": tInt, "limit": tInt, "time_window_minutes": tInt,
			"retry_after_seconds": described(tInt, "seconds until the device takes another execution: the Retry-After header's value"),
		}),
		"Metadata": props([]string{"name", "actions"}, obj{
			"name": tStr, "description": tStr, "renders": obj{"type": "array", "items": tStr}, "parses": obj{"type": "array", "items": tStr},
			"actions": obj{"type": "object", "description": "POST (on a list) or PUT (on an object): field name to its description.",
				"additionalProperties": obj{"type": "object", "additionalProperties": ref("FieldMetadata")}},
			"ordering": described(obj{"type": "array", "items": tStr}, "The names ?ordering= accepts on the list; prefix one with - for descending order."),
		}),
		"FieldMetadata": props([]string{"type", "required", "read_only", "label"}, obj{
			"type":     described(tStr, "string, integer, boolean, datetime, float, json, choice, multiple choice, field (a reference), list or nested object."),
			"required": tBool, "read_only": tBool, "write_only": tBool, "allow_null": tBool, "label": tStr, "help_text": tStr,
			"max_length": tInt, "min_value": tInt, "max_value": tInt, "default": obj{},
			"choices":  obj{"type": "array", "items": props([]string{"value", "display_name"}, obj{"value": tStr, "display_name": tStr})},
			"list_url": described(tStr, "For a reference: the list its objects come from."),
			"child":    described(tAnyObj, "For a list: its elements' description."),
		}),
		"IPFamily": props([]string{"value", "label"}, obj{"value": obj{"type": "integer", "enum": []any{4, 6}}, "label": tStr}),
		"APIRoot": props(nil, obj{"dcim": tStr, "extras": tStr, "ipam": tStr, "plugins": tStr, "status": tStr, "users": tStr,
			"tenancy": tStr, "virtualization": tStr}),
		"SectionIndex": obj{"type": "object", "additionalProperties": tStr, "description": "Endpoint name to its absolute URL."},
		"HubBatch": props([]string{"protocol", "epoch", "epoch_start", "records"}, obj{
			"protocol": tInt, "instance": described(tStr, "The edge's database."), "epoch": tStr, "epoch_start": tInt,
			"sent_at": tTime, "version": tStr, "backlog": tInt, "oldest": obj{"type": "string", "format": "date-time", "nullable": true},
			"records": obj{"type": "array", "items": props([]string{"seq", "kind", "op", "id"}, obj{
				"seq": tInt, "kind": obj{"type": "string", "enum": []any{"log", "device", "platform", "command", "snapshot"}},
				"op": obj{"type": "string", "enum": []any{"upsert", "delete"}}, "id": tInt, "uid": tStr,
				"body": described(tAnyObj, "The object as the edge's API renders it."), "cut": tBool,
			})},
		}),
		"HubJobs": props([]string{"protocol", "jobs"}, obj{"protocol": tInt, "jobs": obj{"type": "array", "items": props(
			[]string{"id", "command_id", "device_id", "timeout", "by"}, obj{"id": tInt, "command_id": tInt, "device_id": tInt,
				"variables": tAnyObj, "timeout": tInt, "by": described(tStr, "The hub user who asked.")})}}),
		"HubJob": props([]string{"id", "url", "state"}, obj{
			"id": tInt, "url": obj{"type": "string", "format": "uri"}, "site": described(tInt, "The hub site's id."),
			"command": tInt, "device": tInt,
			"state":   obj{"type": "string", "enum": []any{"queued", "sent", "done", "expired"}},
			"created": tTime, "expires": tTime, "finished": obj{"type": "string", "format": "date-time", "nullable": true},
			"status": obj{"type": "integer", "nullable": true, "description": "The HTTP status the site answered with."},
			"result": obj{"type": "object", "nullable": true, "additionalProperties": true, "description": "The site's answer, as its execute answers (ids the hub's)."},
		}),
		"HubAnswer": props([]string{"protocol"}, obj{
			"protocol": tInt, "acknowledged": tInt, "expected": tInt, "applied": tInt, "duplicates": tInt,
			"problems": obj{"type": "array", "items": props([]string{"seq", "problem"}, obj{"seq": tInt, "problem": tStr})},
			"code":     obj{"type": "string", "enum": []any{"gap", "diverged", "superseded", "instance"}},
			"detail":   tStr, "max_bytes": tInt,
		}),
		"Status": props([]string{"fieldkit-version", "netbox-version", "uptime_seconds"}, obj{
			"fieldkit-version": tStr, "netbox-version": described(tStr, "The NetBox API version emulated."),
			"python-version": obj{"type": "string", "nullable": true}, "plugins": obj{"type": "object", "additionalProperties": tStr},
			"uptime_seconds": tInt, "counts": obj{"type": "object", "additionalProperties": tInt},
			"database": described(props([]string{"status"}, obj{
				"status": obj{"type": "string", "enum": []any{"ok", "error"}}, "error": tStr,
				"size_bytes": tInt, "wal_size_bytes": tInt,
			}), "The database answers a query; its file and write-ahead log sizes."),
			"scheduler": described(props([]string{"status", "jobs"}, obj{
				"status": described(obj{"type": "string", "enum": []any{"ok", "degraded"}}, "degraded: a job's last run failed."),
				"jobs": obj{"type": "array", "items": props([]string{"name", "schedule", "state"}, obj{
					"name": tStr, "schedule": described(tStr, `"every 1h", "hourly", "daily HH:MM"; "" when off.`),
					"state":      obj{"type": "string", "enum": []any{"off", "idle", "running", "failed"}},
					"last_run":   obj{"type": "string", "format": "date-time", "nullable": true},
					"next_run":   obj{"type": "string", "format": "date-time", "nullable": true},
					"last_error": tStr, "last_duration_ms": tInt,
				})},
				"schedules": described(obj{"type": "object", "properties": obj{
					"schedules": described(tInt, "schedules defined"), "active": described(tInt, "of them, active"),
					"runs": described(tInt, "runs started since start-up"), "failed_runs": tInt, "errored_runs": tInt,
					"skipped_runs":     described(tInt, "runs not started because the one before was still going"),
					"missed_runs":      described(tInt, "runs due while the server was down, not run"),
					"last_lag_seconds": described(tNum, "how late the last run started"),
					"jobs_running":     described(tInt, "device jobs running"), "jobs_queued": described(tInt, "device jobs waiting for a worker"),
				}}, "The users' schedules (netbox_toolkit_plugin.schedule) since start-up."),
			}), "The background jobs (session cleanup, log retention, log export) and the users' schedules."),
			"hub": described(props([]string{"state"}, obj{
				"url": tStr, "state": obj{"type": "string", "enum": []any{"starting", "ok", "unreachable", "busy", "refused", "upgrade_required", "superseded"}},
				"last_error": tStr, "last_push": tTime, "sent": tInt, "duplicates": tInt, "failures": tInt,
				"pending":        described(tInt, "Records the hub has not acknowledged."),
				"behind_seconds": described(tNum, "How old the oldest of them is."),
				"epoch":          tStr, "instance": tStr, "acknowledged": tInt,
			}), "On an edge pushing to a hub (hub.url): the pusher's state and how far behind the hub is."),
		}),
		"ExecuteRequest": props([]string{"device_id", "credential_token"}, obj{
			"device_id": tInt, "credential_token": token, "variables": vars, "timeout": timeout, "notes": notes,
			"expires_in": obj{"type": "integer", "minimum": 60, "maximum": 604800, "default": 3600,
				"description": "On a hub, for a site's command: seconds the job waits for an offline site."},
		}),
		"ExecuteResult": props([]string{"success", "output", "error_message", "execution_time", "command", "device", "syntax_error", "parsed_output", "command_log_id", "output_truncated", "failure"}, obj{
			"success":        tBool,
			"output":         described(tStr, "The device's output, without the echoed command and the trailing prompt."),
			"error_message":  described(tStr, "Empty when successful."),
			"execution_time": described(tNum, "Duration in seconds."),
			"command": props([]string{"id", "name", "command_type"}, obj{
				"id": tInt, "name": tStr, "command_type": obj{"type": "string", "enum": anyStrings(store.ChoiceValues(store.CommandTypes))},
			}),
			"device":           props([]string{"id", "name"}, obj{"id": tInt, "name": tStr}),
			"syntax_error":     ref("SyntaxError"),
			"parsed_output":    ref("ParsedOutput"),
			"failure":          obj{"type": "object", "nullable": true, "allOf": []any{ref("ExecutionFailure")}},
			"command_log_id":   described(tInt, "The command log entry written."),
			"output_truncated": described(tBool, "The output was cut at the configured maximum (exec.max_output_bytes)."),
		}),
		"ExecutionFailure": described(props([]string{"phase", "reason", "address", "port"}, obj{
			"phase": described(obj{"type": "string", "enum": []any{"connect", "login", "enable", "command", "logout"}}, "The step that failed."),
			"reason": described(tStr, "What went wrong: refused, unreachable, timeout, host_key, negotiation, auth, shell, enable, "+
				"closed, cancelled, exit_status, not_run, invalid or failed."),
			"address": tStr, "port": tInt, "username": described(tStr, "The login user."),
			"credential_set":  described(tStr, "The credential set's name."),
			"detail":          described(tStr, "The cause in its source's words (never a secret)."),
			"timeout_seconds": described(tNum, "For a timeout: the time the phase had."),
			"cancelled_by":    described(tStr, "For a cancellation: who cancelled."),
			"exit_status":     tInt,
		}), "Why an execution failed, in the parts error_message is written from; null when it did not fail, or when the device refused a line (syntax_error)."),
		"SyntaxError": props([]string{"detected"}, obj{
			"detected": tBool,
			"type": obj{"type": "string", "enum": []any{"invalid_input", "incomplete_command", "ambiguous_command",
				"unknown_command", "permission_denied", "config_rejected"}},
			"vendor":   described(tStr, "The driver that recognised the error."),
			"line":     described(tStr, "The device's error line."),
			"guidance": described(tStr, "What to fix."),
		}),
		"ScheduleRun": props([]string{"trigger", "started", "finished", "status", "devices", "successful", "failed", "rejected"}, obj{
			"trigger":      described(obj{"type": "string", "enum": []any{"schedule", "catch_up", "manual"}}, "schedule: it was due; catch_up: the one run of those missed while the server was down; manual: run now"),
			"triggered_by": described(obj{"type": "string", "nullable": true}, "who ran it now (manual)"),
			"started":      tTime, "finished": tTime,
			"status":  described(obj{"type": "string", "enum": []any{"completed", "failed", "errored"}}, "completed: every device succeeded; failed: some failed or were refused by a check; errored: the run could not start (error says why)"),
			"devices": described(tInt, "devices the run targeted"), "successful": tInt, "failed": tInt,
			"rejected": described(obj{"type": "array", "items": props([]string{"device_id", "device", "reason"},
				obj{"device_id": tInt, "device": tStr, "reason": tStr})}, "devices a check refused (permission, variables, rate limit…)"),
			"error":       tStr,
			"lag_seconds": described(tNum, "how late the run started after it was due (and its jitter)"),
		}),
		"EventConditions": described(obj{"type": "object", "additionalProperties": true},
			`NetBox's condition set: {"attr": "device.name", "value": "r1", "op": "eq", "negate": false}, or {"and": [...]} / {"or": [...]} of them.`),
		"BackupHealthList": props([]string{"count", "summary", "next", "previous", "results"}, obj{
			"count":   tInt,
			"summary": described(props([]string{"ok", "stale", "never"}, obj{"ok": tInt, "stale": tInt, "never": tInt}), "devices by status, before the status filter"),
			"next":    obj{"type": "string", "format": "uri", "nullable": true}, "previous": obj{"type": "string", "format": "uri", "nullable": true},
			"results": obj{"type": "array", "items": props([]string{"device", "site", "status", "last_good", "age_seconds", "limit_seconds", "limit_from"}, obj{
				"device":            props([]string{"id", "url", "name", "display"}, obj{"id": tInt, "url": tStr, "name": tStr, "display": tStr}),
				"site":              props([]string{"id", "url", "name", "slug", "display"}, obj{"id": tInt, "url": tStr, "name": tStr, "slug": tStr, "display": tStr}),
				"status":            obj{"type": "string", "enum": []any{"ok", "stale", "never"}},
				"last_good":         described(obj{"type": "string", "format": "date-time", "nullable": true}, "the last read that kept or found its configuration; null: never"),
				"age_seconds":       obj{"type": "integer", "nullable": true},
				"limit_seconds":     tInt,
				"limit_from":        described(obj{"type": "string", "enum": []any{"setting", "site"}}, "setting: config_backup.max_age; site: the site's backup_max_age_hours"),
				"latest_version_id": obj{"type": "integer", "nullable": true},
			})},
		}),
		"LogSchedule":        props([]string{"id", "name", "display"}, obj{"id": tInt, "name": tStr, "display": tStr}),
		"ScheduleRunStarted": props([]string{"detail", "schedule"}, obj{"detail": tStr, "schedule": tInt}),
		"LogVariables": described(obj{"type": "object", "additionalProperties": tStr},
			"Variable name to the value it took, e.g. {\"iface\": \"Gi1/0/1\"}."),
		"ParsedOutput": props([]string{"success", "method", "data"}, obj{
			"success":  tBool,
			"method":   obj{"type": "string", "enum": []any{"textfsm", nil}, "nullable": true},
			"template": obj{"type": "string", "nullable": true},
			"data":     obj{"type": "array", "items": described(tAnyObj, "One parsed record: lower-case header to value (a string or a list of strings).")},
			"error":    described(tStr, "Why parsing failed or was not possible."),
			"columns":  obj{"type": "array", "items": tStr, "description": "The record keys in the template's column order (data objects carry no order)."},
		}),
		"ParseRequest": props([]string{"output"}, obj{
			"platform": described(obj{"type": "string", "maxLength": maxParsePlatform},
				"A platform's slug or name, or an ntc platform name (cisco_ios). Required unless template is sent."),
			"command": described(obj{"type": "string", "maxLength": maxParseCommand},
				"The command as it would run (abbreviations as the index allows). Required unless template is sent."),
			"output":   described(tStr, "The device's output to parse; may be empty."),
			"template": described(obj{"type": "string", "maxLength": MaxTemplateChars}, "A TextFSM template's text to run instead of the lookup."),
		}),
		"ParseResponse": props([]string{"parsed_output"}, obj{"parsed_output": ref("ParsedOutput")}),
		"BulkExecuteRequest": props([]string{"executions"}, obj{
			"executions": obj{"type": "array", "minItems": 1, "items": ref("BulkExecution"),
				"description": "At most exec.bulk_max (default 100)."},
			"include": described(obj{"type": "array", "items": obj{"type": "string", "enum": anyStrings(bulkIncludable)}},
				"Fields each result also carries, as execute answers them: device ({id, name}), output, parsed_output, "+
					"and error (syntax_error and failure; a rejected element's error_message, its reason as a sentence). "+
					"A rejected element has them null, its device as far as it was found."),
			"notes": described(obj{"type": "string", "maxLength": store.MaxNotes},
				"The notes of every execution that gives none of its own."),
			"expires_in": obj{"type": "integer", "minimum": 60, "maximum": 604800, "default": 3600,
				"description": "On a hub, for the elements of a site's command: seconds each job waits for an offline site."},
		}),
		"BulkExecution": props([]string{"command_id", "device_id", "credential_token"}, obj{
			"command_id": tInt, "device_id": tInt, "credential_token": token, "variables": vars, "timeout": timeout,
			"notes": notes,
		}),
		"PatchedWritableCommandLogRequest": props([]string{"notes"}, obj{"notes": notes}),
		"BulkExecuteResponse": props([]string{"results", "summary"}, obj{
			"results": obj{"type": "array", "items": obj{"oneOf": []any{ref("BulkResult"), ref("BulkRejected"), ref("BulkWaiting")}}},
			"summary": props([]string{"total", "successful", "failed"}, obj{"total": tInt, "successful": tInt, "failed": tInt,
				"pending": described(tInt, "On a hub, with a 202: the elements whose site has not answered yet.")}),
		}),
		"BulkWaiting": described(props([]string{"execution_id", "success", "command_log_id", "execution_time", "state", "job"}, withIncluded(obj{
			"execution_id": tInt, "success": obj{"type": "boolean", "nullable": true, "enum": []any{nil}},
			"command_log_id": obj{"type": "integer", "nullable": true, "enum": []any{nil}},
			"execution_time": obj{"type": "number", "nullable": true, "enum": []any{nil}},
			"error_message":  obj{"type": "string", "nullable": true, "enum": []any{nil}},
			"state":          obj{"type": "string", "enum": []any{"queued", "sent"}},
			"job":            jobURL,
		})), "On a hub: an element queued at its site that has not answered yet; read its job later."),
		"BulkResult": described(props([]string{"execution_id", "success", "command_log_id", "execution_time", "error_message"}, withIncluded(obj{
			"execution_id": described(tInt, "1-based index in the request."), "success": tBool,
			"command_log_id": tInt, "execution_time": described(tNum, "Seconds."), "error_message": tStr, "job": jobURL,
		})), "An execution that ran (or tried to reach the device)."),
		"BulkRejected": described(props([]string{"execution_id", "success", "command_log_id", "execution_time", "error", "details"}, withIncluded(obj{
			"execution_id": tInt, "success": obj{"type": "boolean", "enum": []any{false}},
			"command_log_id": obj{"type": "integer", "nullable": true, "enum": []any{nil}},
			"execution_time": obj{"type": "number", "nullable": true, "enum": []any{nil}},
			"error":          described(tStr, "Short reason."),
			"details":        described(tAnyObj, "Field errors, or the rate limit details."),
			"error_message":  described(tStr, "With include error: the reason as one sentence."),
			"job":            jobURL,
		})), "An execution rejected before running; no log is written."),
		"VariableChoices": props([]string{"device_id", "device_name", "command_id", "command_name", "variables"}, obj{
			"device_id": tInt, "device_name": tStr, "command_id": tInt, "command_name": tStr,
			"variables": obj{"type": "object", "additionalProperties": ref("VariableChoice"), "description": "Keyed by variable name."},
		}),
		"VariableChoice": props([]string{"type", "choices", "help_text", "default_value", "required", "display_name"}, obj{
			"type": obj{"type": "string", "enum": anyStrings(store.VariableTypes)}, "choices": obj{"type": "array", "items": ref("Choice")},
			"help_text": tStr, "default_value": tStr, "required": tBool, "display_name": tStr,
		}),
		"PortNumbers": obj{"type": "array", "items": obj{"type": "integer", "minimum": 1, "maximum": 65535}},
		"PermissionConstraints": obj{"anyOf": []any{
			obj{"type": "object", "additionalProperties": true, "nullable": true, "description": "Every lookup must hold."},
			obj{"type": "array", "items": tAnyObj, "nullable": true, "description": "Any of the objects may hold."},
		}},
		"Choice": described(props([]string{"value", "display"}, obj{
			"value": tStr, "display": tStr, "id": tInt,
			"enabled": described(tBool, "Interfaces."), "name": described(tStr, "VLANs."), "status": described(tStr, "IP addresses."),
		}), "Interfaces {value, display, id, enabled}; VLANs {value: vid, display: \"vid (name)\", id, name}; IPs {value: ip, display: ip/len, id, status}."),
		"ImportRequest": props([]string{"data"}, obj{
			"data":     described(tStr, "The file's text."),
			"filename": described(tStr, "Its name: the extension tells the format, the stem the object type."),
			"type": obj{"type": "string", "enum": importKindEnum(),
				"description": "The object type of a list; default: from the file name."},
			"format":  obj{"type": "string", "enum": []any{"csv", "yaml", "json"}, "description": "Default: from the name or the content."},
			"dry_run": described(tBool, "Report what would be done; write nothing."),
		}),
		"ImportReport": props([]string{"dry_run", "created", "updated", "unchanged", "types", "rows"}, obj{
			"dry_run": tBool, "created": tInt, "updated": tInt, "unchanged": tInt,
			"types": obj{"type": "array", "items": props([]string{"type", "created", "updated", "unchanged", "ignored_columns"}, obj{
				"type": tStr, "created": tInt, "updated": tInt, "unchanged": tInt,
				"ignored_columns": described(obj{"type": "array", "items": tStr}, "NetBox columns FieldKit keeps no field for."),
			})},
			"rows": obj{"type": "array", "items": props([]string{"type", "action", "display"}, obj{
				"type": tStr, "row": described(tInt, "CSV row, the header being row 1."), "item": described(tInt, "YAML or JSON list item."),
				"action": obj{"type": "string", "enum": []any{"create", "update", "unchanged"}},
				"id":     described(tInt, "The object's id (not on a dry run's creates)."), "display": tStr,
			})},
		}),
		"SyncReport": props([]string{"source", "objects", "warnings"}, obj{
			"source": described(tStr, "The device list fetched (path and filter)."), "resumed": described(tBool, "It went on from an interrupted sync."),
			"pages": tInt, "duration_seconds": tNum,
			"objects": obj{"type": "object", "description": "By object type (devices, interfaces, ip-addresses, vlans, sites, platforms, tags).",
				"additionalProperties": props(nil, obj{"fetched": tInt, "created": tInt, "updated": tInt, "unchanged": tInt,
					"deleted": tInt, "kept": described(tInt, "Gone from NetBox but kept, as FieldKit's own, because something here uses them (a device's logs: it is offline).")})},
			"warnings": obj{"type": "array", "items": tStr},
		}),
		"SyncStatus": props([]string{"configured", "running", "runs"}, obj{
			"configured": tBool, "netbox_url": tStr, "filter": tStr, "running": tBool,
			"progress": described(tStr, "The running sync's last progress line."), "started": obj{"type": "string", "format": "date-time"},
			"runs": obj{"type": "array", "items": props([]string{"id", "state"}, obj{
				"id": tInt, "state": obj{"type": "string", "enum": []any{"fetching", "done", "failed"},
					"description": "fetching: running, or interrupted and to be resumed."},
				"phase": tStr, "pages": tInt, "started": obj{"type": "string", "format": "date-time"},
				"finished": obj{"type": "string", "format": "date-time", "nullable": true}, "error": tStr,
				"summary": obj{"type": "object", "additionalProperties": true},
			})},
		}),
		"TokenProvisionRequest": props([]string{"username", "password"}, obj{
			"username": tStr, "password": obj{"type": "string", "writeOnly": true}, "description": tStr,
			"expires": obj{"type": "string", "format": "date-time", "nullable": true}, "write_enabled": tBool,
		}),
		"ValidateVariablesRequest": props([]string{"device_id"}, obj{"device_id": tInt, "variables": vars}),
		"ValidateVariablesResponse": props([]string{"valid", "command"}, obj{
			"valid": obj{"type": "boolean", "enum": []any{true}}, "command": described(tStr, "The rendered command."),
		}),
		"CommandLogStatistics": props([]string{"total_logs", "success_rate", "last_24h", "top_commands", "common_errors"}, obj{
			"total_logs":   tInt,
			"success_rate": described(tNum, "Percentage, 2 decimals; 0 with no logs."),
			"last_24h":     props([]string{"total", "successful", "failed"}, obj{"total": tInt, "successful": tInt, "failed": tInt}),
			"top_commands": obj{"type": "array", "maxItems": 10, "items": props([]string{"command_name", "count"}, obj{"command_name": tStr, "count": tInt})},
			"common_errors": obj{"type": "array", "maxItems": 10, "items": props([]string{"error", "count"}, obj{
				"error": described(tStr, "First 100 characters of the error message."), "count": tInt})},
		}),
	}
	s["CommandLogExport"] = props([]string{"count", "results"}, obj{
		"count": tInt, "results": obj{"type": "array", "items": exportItemSchema(s)},
	})
	for k, v := range changeSchemas() {
		s[k] = v
	}
	return s
}

// exportItemSchema is one log of the JSON export, from the fields the declaration
// exports: a reference as its id (null once the object is gone) and kept name.
func exportItemSchema(schemas obj) obj {
	p, required := obj{}, []string{}
	for _, f := range store.CommandLogs.Exported(true) {
		switch {
		case f.Ref():
			ref := props([]string{"id", "name"}, obj{"id": obj{"type": "integer", "nullable": true}, "name": tStr})
			if f.Null {
				ref["nullable"] = true // none was referenced
			}
			p[f.Name] = ref
		case f.Kind == store.KindTime:
			p[f.Name] = tTime // as stored: RFC 3339, UTC, microseconds
		default:
			p[f.Name] = fieldSchema(schemas, docOf(logResource, f), false)
		}
		if f.Export == store.ExportOnRequest {
			p[f.Name] = described(p[f.Name].(obj), "With include_output=true.")
			continue
		}
		required = append(required, f.Name)
	}
	return props(required, p)
}
