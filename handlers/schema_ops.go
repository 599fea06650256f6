package handlers

import (
	"net/http"
	"strings"

	"fieldkit/store"
)

// opDoc documents one endpoint that is not plain CRUD. Path is in httprouter syntax as
// routed.
type opDoc struct {
	Method, Path      string
	ID, Summary, Desc string
	Query             []any  // query parameters
	FiltersOf         string // also every list filter of the resource at this path
	Body              obj    // request schema
	OK                obj    // success response
	OKStatus          string // default "200"
	RateLimited       bool
	Errors            map[string]string // further error statuses, to the name of their shared response
}

// opDocs is every non-CRUD endpoint; each is in the schema only once it is routed.
var opDocs = []opDoc{
	{Method: http.MethodGet, Path: "/api/", ID: "api_root", Summary: "API index",
		Desc: "The sections of the API with their URLs, as NetBox answers.",
		OK:   jsonResponse("The sections.", ref("APIRoot"))},
	{Method: http.MethodGet, Path: "/api/dcim/", ID: "dcim_root", Summary: "dcim section index",
		Desc: "The endpoints of the section with their URLs.", OK: jsonResponse("The endpoints.", ref("SectionIndex"))},
	{Method: http.MethodGet, Path: "/api/ipam/", ID: "ipam_root", Summary: "ipam section index",
		Desc: "The endpoints of the section with their URLs.", OK: jsonResponse("The endpoints.", ref("SectionIndex"))},
	{Method: http.MethodGet, Path: "/api/extras/", ID: "extras_root", Summary: "extras section index",
		Desc: "The endpoints of the section with their URLs.", OK: jsonResponse("The endpoints.", ref("SectionIndex"))},
	{Method: http.MethodGet, Path: "/api/tenancy/", ID: "tenancy_root", Summary: "tenancy section index",
		Desc: "The endpoints of the section with their URLs.", OK: jsonResponse("The endpoints.", ref("SectionIndex"))},
	{Method: http.MethodGet, Path: "/api/virtualization/", ID: "virtualization_root", Summary: "virtualization section index",
		Desc: "The endpoints of the section with their URLs.", OK: jsonResponse("The endpoints.", ref("SectionIndex"))},
	{Method: http.MethodGet, Path: "/api/users/", ID: "users_root", Summary: "users section index",
		Desc: "The endpoints of the section with their URLs.", OK: jsonResponse("The endpoints.", ref("SectionIndex"))},
	{Method: http.MethodGet, Path: "/api/plugins/", ID: "plugins_root", Summary: "plugins index",
		Desc: "The installed plugins with their URLs.", OK: jsonResponse("The plugins.", ref("SectionIndex"))},
	{Method: http.MethodGet, Path: "/api/plugins/toolkit/", ID: "toolkit_root", Summary: "toolkit plugin index",
		Desc: "The toolkit plugin's endpoints with their URLs.", OK: jsonResponse("The endpoints.", ref("SectionIndex"))},
	{Method: http.MethodPost, Path: pathImport, ID: "plugins_toolkit_import_create", Summary: "Import inventory objects from a file",
		Desc: "NetBox's bulk import formats: CSV with a header row of field names, or a YAML or JSON list of objects " +
			"(`type` names their object type, else the file name does: devices.csv), or a mapping of object types to lists. " +
			"References name objects as a person does (a site by name or slug, a device by name, an interface by its " +
			"device and name, a VLAN by VID); a record naming an existing object updates it. Devices take `mgmt_ip` " +
			"and `ssh_port`; addresses `device`, `interface` and `is_primary`; `cf_<name>` columns are custom fields. " +
			"All or nothing: a 400 lists every problem by row and column. `dry_run` reports what would be done. " +
			"Needs add (and change, for updates) on each object type written.",
		Body: ref("ImportRequest"), OK: jsonResponse("What was imported, or would be.", ref("ImportReport"))},
	{Method: http.MethodOptions, Path: pathImport, ID: "plugins_toolkit_import_metadata", Summary: "Describe the fields an import takes",
		Desc: "As Django REST framework's metadata: under actions.POST the fields of an import, with the object types " +
			"and formats it knows as choices.",
		OK: jsonResponse("The metadata.", ref("Metadata"))},
	{Method: http.MethodPost, Path: pathInventorySync, ID: "plugins_toolkit_inventory_sync_create", Summary: "Sync the inventory from NetBox now",
		Desc: "Fetches the devices the configured filter selects (inventory.netbox_filter) from the configured NetBox, with " +
			"their sites, platforms, interfaces, IP addresses, VLANs and tags, and applies them in one transaction. " +
			"An interrupted fetch resumes at the next sync. 400 when no NetBox is configured, 409 when a sync runs or when NetBox " +
			"answered no device where some were synced before (the CLI's --allow-empty removes them), " +
			"502 with the reason when NetBox refused or the data could not be applied (nothing changed). Needs add and " +
			"change on every device.",
		OK:     jsonResponse("What the sync did.", ref("SyncReport")),
		Errors: map[string]string{"400": "NotConfigured", "409": "Conflict", "502": "BadGateway"}},
	{Method: http.MethodGet, Path: pathInventorySync, ID: "plugins_toolkit_inventory_sync_retrieve", Summary: "NetBox sync status",
		Desc: "Whether a NetBox is configured (its URL and filter, never the token), what a sync is doing now and the last " +
			"five runs. Needs view on devices.",
		OK: jsonResponse("The status.", ref("SyncStatus"))},
	{Method: http.MethodPost, Path: pathProvision, ID: "users_tokens_provision_create", Summary: "Provision a token with a password",
		Desc: "No authentication: a username and password buy a new API token of that user (pynetbox's create_token). " +
			"The response is the only one that shows the key. A wrong username or password is a 401, counted by the " +
			"web login's throttle (429 with Retry-After after repeated failures).",
		Body: ref("TokenProvisionRequest"), OKStatus: "201", OK: jsonResponse("The token, with its key.", ref("CreatedToken")),
		Errors: map[string]string{"401": "Unauthorized", "429": "TooManyAttempts"}},
	{Method: http.MethodPost, Path: pathHubPush, ID: "hub_push_create", Summary: "Push a site's records (hub only)",
		Desc: "An edge's pusher sends its records here, gzip-compressed (docs/HUB-PROTOCOL.md), with its site token as " +
			"Authorization: Bearer. One transaction per batch; records the hub holds already are counted as duplicates. " +
			"401: unknown or revoked token; 403: the token is bound to another edge's database; 409: a gap (resend from " +
			"expected), a diverged or superseded epoch; 413: split the batch; 426: the edge speaks a newer protocol; 429: busy, " +
			"retry after Retry-After seconds.",
		Body: ref("HubBatch"), OK: jsonResponse("What the hub stored.", ref("HubAnswer")),
		Errors: map[string]string{"401": "HubRefused", "403": "HubRefused", "409": "HubRefused", "413": "HubRefused",
			"426": "HubRefused", "429": "HubRefused"}},
	{Method: http.MethodGet, Path: pathHubPoll, ID: "hub_jobs_poll", Summary: "Take a site's jobs (hub only)",
		Desc: "A site's FieldKit long-polls here with its site token: the jobs its hub queued for it (at most 8), each " +
			"leased to it for 6 minutes (sent again, and recognised, if it does not answer by then); with none, the hub " +
			"waits up to `wait` seconds (at most 30) for one. The site answers each through its outbox (docs/HUB-PROTOCOL.md).",
		Query:  []any{queryParam("wait", "Seconds to wait for a job (0 to 30).", obj{"type": "integer", "minimum": 0}, false)},
		OK:     jsonResponse("The jobs.", ref("HubJobs")),
		Errors: map[string]string{"400": "BadRequest", "401": "HubRefused", "403": "HubRefused"}},
	{Method: http.MethodGet, Path: pathHubJobs + ":id/", ID: "plugins_toolkit_hub_jobs_retrieve", Summary: "A job sent to a site (hub only)",
		Desc: "The job an execute of a site's command queued: queued, sent to the site, done (with the site's answer, " +
			"its `status` and `result`) or expired. Its requester (or a superuser) reads it.",
		OK: jsonResponse("The job.", ref("HubJob"))},
	{Method: http.MethodPost, Path: pathHubSites + ":id/revoke/", ID: "plugins_toolkit_hub_sites_revoke_create",
		Summary: "Revoke a site's token (hub only)",
		Desc: "The site's token stops working at once (its pushes get 401); the site and everything it pushed stay. " +
			"Needs change on the site.",
		OK: jsonResponse("The site.", ref("HubSite"))},
	{Method: http.MethodPost, Path: pathHubSites + ":id/token/", ID: "plugins_toolkit_hub_sites_token_create",
		Summary: "Give a site a new token (hub only)",
		Desc: "The old token stops working, a revoked site works again, and the token is no longer bound to the " +
			"database that pushed first (for an edge installed anew). The answer is the only one that shows the token. " +
			"Needs change on the site.",
		OK: jsonResponse("The site, with its token.", ref("CreatedHubSite"))},
	{Method: http.MethodGet, Path: "/api/status/", ID: "status_retrieve", Summary: "Service status",
		Desc: "Versions, uptime and object counts. No authentication needed.",
		OK:   jsonResponse("The status.", ref("Status"))},
	{Method: http.MethodGet, Path: "/api/schema/", ID: "schema_retrieve", Summary: "This OpenAPI schema",
		Query: []any{queryParam("format", "json (default; also openapi, openapi-json) or yaml.",
			obj{"type": "string", "enum": []any{"json", "openapi", "openapi-json", "yaml", "openapi-yaml"}}, false)},
		OK: obj{"description": "The OpenAPI 3.0 document.", "content": obj{
			"application/vnd.oai.openapi+json": obj{"schema": obj{"type": "object", "additionalProperties": true}},
			"application/yaml":                 obj{"schema": obj{"type": "string"}},
		}}},
	{Method: http.MethodDelete, Path: pathDevices + ":id/host-key/", ID: "dcim_devices_host_key_destroy",
		Summary: "Forget a device's SSH host key",
		Desc: "Clears the host key trusted on first use (after a device was replaced or re-keyed), so the next " +
			"connection trusts the key it is shown. Needs the clear_host_key action on the device (or a superuser): " +
			"editing a device is not enough, since a changed key may be an impostor's.",
		OK: obj{"description": "Cleared; no body."}, OKStatus: "204"},
	{Method: http.MethodPost, Path: pathCommands + ":id/execute/", ID: "plugins_toolkit_commands_execute_create",
		Summary: "Execute a command on one device",
		Desc: "Checks, in order: the command is visible (404), the body (400), the device exists and is visible, has a " +
			"platform of the command and a primary IP (400), the execute_show/execute_config permission (403), the " +
			"credential token (400), the variables (400), the device's rate limit (429). Once the device was contacted " +
			"or tried the answer is 200 and the outcome is in `success`; a command log entry is written. On a hub, a site's " +
			"command runs at its site: the hub checks the command, the device (at the same site) and the permission, queues " +
			"a job, and answers the site's own answer when it comes within `timeout` seconds, else 202 with the job to read " +
			"later (`expires_in`, 60 s to 7 days, default 1 h: how long the job waits for an offline site; no " +
			"`credential_token`: the site runs it with its hub.credential_set).",
		Body: ref("ExecuteRequest"), OK: jsonResponse("The execution result.", ref("ExecuteResult")), RateLimited: true,
		Errors: map[string]string{"202": "HubJobQueued"}},
	{Method: http.MethodPost, Path: pathCommands + "bulk-execute/",
		ID: "plugins_toolkit_commands_bulk_execute_create", Summary: "Execute commands on several devices",
		Desc: "Runs the executions concurrently (same device and credentials: in order, over one session) and answers " +
			"200 with one result per execution in request order. Permissions, variables, credentials and the rate " +
			"limit are checked per element: a rejected element has `command_log_id: null` and `error` + `details`. On a " +
			"hub, each element of a site's command is a job at its site, checked as an execute at the hub (`expires_in` " +
			"applies to each job); the answer is 200 when every site answers within the longest of the elements' " +
			"timeouts, each such element with its `job` URL, else 202 with the elements still waiting as `success: null`, " +
			"their `state` and `job`, counted in `summary.pending`.",
		Body: ref("BulkExecuteRequest"), OK: jsonResponse("Per-execution results and a summary.", ref("BulkExecuteResponse")),
		Errors: map[string]string{"202": "HubBulkQueued"}},
	{Method: http.MethodGet, Path: pathCommands + ":id/variable-choices/", ID: "plugins_toolkit_commands_variable_choices_retrieve",
		Summary: "Variable choices for a device",
		Desc:    "For each variable of the command, its type and the values it may take on the device (interfaces, VLANs, IPs; `[]` for text).",
		Query:   []any{queryParam("device_id", "The target device.", obj{"type": "integer", "minimum": 1}, true)},
		OK:      jsonResponse("The choices.", ref("VariableChoices"))},
	{Method: http.MethodPost, Path: pathCommands + ":id/validate-variables/", ID: "plugins_toolkit_commands_validate_variables_create",
		Summary: "Validate variables without executing",
		Desc:    "Runs the checks execute would (except credentials and the rate limit) and renders the command. Nothing is sent to the device; no log is written.",
		Body:    ref("ValidateVariablesRequest"), OK: jsonResponse("The variables are valid.", ref("ValidateVariablesResponse"))},
	{Method: http.MethodPost, Path: pathParse, ID: "plugins_toolkit_parse_create",
		Summary: "Parse an output without a device",
		Desc: "For template authors and tests. Needs view permission on commands. `platform` names a platform of the " +
			"inventory (its slug, else its name: its slug, name and driver select the template exactly as an execution on " +
			"one of its devices does) or is read as an ntc platform name. The answer is 200 with the `parsed_output` an " +
			"execution would give, whether or not a template matched. With `template`, that text is compiled and run " +
			"instead (at most 65,536 characters, 5 s); `parsed_output.template` is then `request`, and a template that " +
			"does not compile is a 400 on `template`.",
		Body: ref("ParseRequest"), OK: jsonResponse("The parsed output.", ref("ParseResponse"))},
	{Method: http.MethodPost, Path: pathSchedules + ":id/run/", ID: "plugins_toolkit_schedules_run_create",
		Summary: "Run a schedule now",
		Desc: "Starts a run of the schedule at once, as its owner with its service credential set, exactly as when it " +
			"falls due; the answer does not wait for it (202). The schedule's last_run shows the outcome, its logs carry " +
			"source schedule and its id. Needs the run action on the schedule. 409 while a run is going or when the " +
			"schedule is disabled or paused (the detail says why).",
		OKStatus: "202", OK: jsonResponse("The run has started.", ref("ScheduleRunStarted")),
		Errors: map[string]string{"409": "Conflict", "503": "Unavailable"}},
	{Method: http.MethodGet, Path: pathBackupHealth, ID: "plugins_toolkit_backup_health_list",
		Summary: "Each device's config backup against its age limit",
		Desc: "Every active device the user may view with the age of its last good config backup against its limit " +
			"(config_backup.max_age, or the site's custom field backup_max_age_hours) and a status: ok, stale, or never " +
			"(never backed up). Never backed up first, then the oldest; summary counts each status over the filtered " +
			"devices' site. Needs view on netbox_toolkit_plugin.configversion.",
		Query: []any{
			queryParam("site_id", "Devices of this site.", obj{"type": "integer"}, false),
			queryParam("status", "Only this status.", obj{"type": "string", "enum": []any{"ok", "stale", "never"}}, false),
			queryParam("limit", "Page size (default 50, at most 1000; 0: 1000).", obj{"type": "integer", "minimum": 0}, false),
			queryParam("offset", "Devices to skip.", obj{"type": "integer", "minimum": 0}, false),
		},
		OK: jsonResponse("The devices.", ref("BackupHealthList")), Errors: map[string]string{"400": "BadRequest"}},
	{Method: http.MethodGet, Path: pathCommandLogs + "statistics/",
		ID: "plugins_toolkit_command_logs_statistics_retrieve", Summary: "Command log statistics",
		Desc: "Over the logs the user may view. It takes no query parameters (a 400 names any sent).",
		OK:   jsonResponse("The statistics.", ref("CommandLogStatistics")), Errors: map[string]string{"400": "BadRequest"}},
	{Method: http.MethodGet, Path: pathCommandLogs + ":id/diff/",
		ID: "plugins_toolkit_command_logs_diff_retrieve", Summary: "Compare two command outputs",
		Desc: "The unified diff from the output of the log `against` names to this log's, and, when both were parsed, " +
			"their records compared by the template's Key values (every column when it has none). `against=previous` " +
			"is the previous successful run of the same command on the same device. Two devices' outputs compare too. " +
			"Both logs must be visible to the user (a 404 otherwise, as for any log).",
		Query:  []any{queryParam("against", `A log id, or "previous".`, tStr, true)},
		OK:     jsonResponse("The two logs and how their outputs differ.", ref("CommandLogDiff")),
		Errors: map[string]string{"400": "BadRequest"}},
	{Method: http.MethodPatch, Path: pathCommandLogs + ":id/",
		ID: "plugins_toolkit_command_logs_partial_update", Summary: "Edit a command log's notes",
		Desc: "A log records what ran and stays as it was, but for its notes: its author, or a user whose change " +
			"permission on command logs reaches it, may replace them (403 otherwise; 404 for a log out of sight). Any " +
			"other field in the body is a 400 naming it. Each edit is logged (who, which log, the notes' old and new " +
			"lengths).",
		Body: ref("PatchedWritableCommandLogRequest"), OK: jsonResponse("The log, with its new notes.", ref("CommandLog"))},
	{Method: http.MethodGet, Path: pathCommandLogs + "history/",
		ID: "plugins_toolkit_command_logs_history_retrieve", Summary: "A command's runs on a device",
		Desc: "The newest runs of the command on the device that the user may view, newest first, each successful one " +
			"marked `changed` when its output differs from the successful run before it.",
		Query: []any{
			queryParam("device_id", "The device.", obj{"type": "integer", "minimum": 1}, true),
			queryParam("command_id", "The command.", obj{"type": "integer", "minimum": 1}, true),
			queryParam("limit", "How many runs (default 50).", obj{"type": "integer", "minimum": 1, "maximum": historyMax}, false),
		},
		OK:     jsonResponse("The runs.", ref("CommandHistory")),
		Errors: map[string]string{"400": "BadRequest"}},
	{Method: http.MethodGet, Path: pathConfigVers + ":id/diff/",
		ID: "plugins_toolkit_config_versions_diff_retrieve", Summary: "Compare two config versions",
		Desc: "The unified diff of the two configurations as shown (secrets masked), from the version `against` names " +
			"(or `previous`, the version this one follows) to this one. Both must be visible (a 404 otherwise).",
		Query: []any{queryParam("against", `A config version id, or "previous".`, tStr, true)},
		OK:    jsonResponse("The two versions and their diff.", ref("ConfigVersionDiff")), Errors: map[string]string{"400": "BadRequest"}},
	{Method: http.MethodGet, Path: pathConfigVers + ":id/raw/",
		ID: "plugins_toolkit_config_versions_raw_retrieve", Summary: "A config version as read, secrets unmasked",
		Desc: "Decrypted with the master key. Needs view and the view_raw_config action on the version (a superuser passes); " +
			"viewing alone is a 403. Each showing is logged.",
		OK: jsonResponse("The configuration as read.", ref("ConfigRaw"))},
	{Method: http.MethodGet, Path: pathConfigVers + "last-good/",
		ID: "plugins_toolkit_config_versions_last_good_retrieve", Summary: "Each device's last good config backup",
		Desc: "Every device the user may view (of the site with site_id), with the last read that kept or found its " +
			"configuration (null: never backed up), its latest version and its last quarantined read; never backed up " +
			"first, then the oldest.",
		Query: []any{queryParam("site_id", "Only this site's devices.", obj{"type": "integer", "minimum": 1}, false)},
		OK:    jsonResponse("The devices.", ref("ConfigLastGood")), Errors: map[string]string{"400": "BadRequest"}},
	{Method: http.MethodGet, Path: pathConfigVers + "search/",
		ID: "plugins_toolkit_config_versions_search_retrieve", Summary: "Search the latest configuration of every device",
		Desc: "The devices whose latest config version (of those the user may view) holds `q`, case ignored, with the " +
			"lines that hold it (at most 1,000 devices). Where the user holds view_raw_config on a version, its text as " +
			"read is searched and shown, secrets included (\"which devices still have snmp-server community public\"); " +
			"elsewhere the text as shown, secrets masked.",
		Query: []any{queryParam("q", "The text to find.", tStr, true)},
		OK:    jsonResponse("The matching devices.", ref("ConfigSearch")), Errors: map[string]string{"400": "BadRequest"}},
	{Method: http.MethodPost, Path: pathConfigVers + "collect/",
		ID: "plugins_toolkit_config_versions_collect_create", Summary: "Back up devices' configurations now",
		Desc: "Runs each device's running-config command (its platform's config_command, else its driver's) as an " +
			"execution with source backup, through the session pool, rate limit and log, and keeps what it read: a " +
			"new version when the normalised configuration changed, the latest confirmed when not, or a quarantined read " +
			"(failed, no end marker, below config_backup.min_lines, shrunk by more than config_backup.max_shrink_percent " +
			"with no FieldKit config execution between). Needs execute_show; a device the user may not view, without an " +
			"address or running-config command, of a platform the credential set excludes, or over its rate limit is " +
			"`rejected` in its result.",
		Body: ref("ConfigCollectRequest"), OK: jsonResponse("Per-device results and a summary.", ref("ConfigCollectResponse"))},
	{Method: http.MethodGet, Path: pathCommandLogs + "export/",
		ID: "plugins_toolkit_command_logs_export_retrieve", Summary: "Export command logs",
		Desc: "Streams every matching log (no page limit) as JSON or as a CSV download. Every filter of the log list applies.",
		Query: []any{
			queryParam("format", "Output format.", obj{"type": "string", "enum": []any{"json", "csv"}, "default": "json"}, false),
			queryParam("start_date", "Logs from this calendar day (inclusive, configured time zone).", obj{"type": "string", "format": "date"}, false),
			queryParam("end_date", "Logs until this calendar day (inclusive).", obj{"type": "string", "format": "date"}, false),
			queryParam("include_output", "Add each log's output.", obj{"type": "boolean", "default": false}, false),
			queryParam("bom", "With format=csv, start the file with a UTF-8 byte order mark so that Excel reads it as UTF-8.", obj{"type": "boolean", "default": false}, false),
		},
		FiltersOf: pathCommandLogs,
		OK: obj{"description": "The logs.", "content": obj{
			"application/json": obj{"schema": ref("CommandLogExport")},
			"text/csv":         obj{"schema": obj{"type": "string", "description": csvExportDoc()}},
		}, "headers": obj{"Content-Disposition": obj{"description": "With format=csv: attachment; filename=\"command-logs-<date>.csv\"",
			"schema": obj{"type": "string"}}}}},
}

func (a *API) addOp(paths, schemas obj, op opDoc) {
	params := op.Query
	if op.FiltersOf != "" {
		for _, res := range a.routedResources() {
			if res.Path == op.FiltersOf {
				if res.Model.Searchable() {
					params = append(params, queryParam("q", "Case-insensitive search.", obj{"type": "string"}, false))
				}
				params = append(params, filterParams(res)...)
			}
		}
	}
	status := op.OKStatus
	if status == "" {
		status = "200"
	}
	a.put(paths, operation{method: op.Method, path: op.Path, id: op.ID, summary: op.Summary, desc: op.Desc,
		params: params, body: op.Body, okStatus: status, ok: op.OK, rateLimited: op.RateLimited, errors: op.Errors})
}

// errorResponses are the shared error answers.
func errorResponses() obj {
	detail := func(desc, example string) obj {
		r := jsonResponse(desc, ref("Detail"))
		r["content"].(obj)["application/json"].(obj)["example"] = obj{"detail": example}
		return r
	}
	unauth := detail("Missing, invalid or expired token.", "Authentication credentials were not provided.")
	unauth["headers"] = obj{"WWW-Authenticate": obj{"schema": obj{"type": "string", "example": "Token"}}}
	limited := jsonResponse("Rate limit exceeded for the device.", ref("RateLimitError"))
	limited["headers"] = obj{"Retry-After": obj{"description": "Seconds until a slot frees.", "schema": obj{"type": "integer"}}}
	throttled := detail("Too many failed logins for the user: wait and retry.", "Too many failed logins; try again in 840 s.")
	throttled["headers"] = obj{"Retry-After": obj{"description": "Seconds to wait.", "schema": obj{"type": "integer"}}}
	return obj{
		"BulkBadRequest":  jsonResponse("Invalid body: for a list, the errors of each element in request order.", ref("BulkValidationError")),
		"BadRequest":      jsonResponse("Invalid parameters or body: messages by field (nested for nested objects), or non_field_errors.", ref("ValidationError")),
		"Unauthorized":    unauth,
		"Forbidden":       detail("The user or token lacks the permission.", "You do not have permission to perform this action."),
		"NotFound":        detail("No such object, or not visible to the user.", "Not found."),
		"PayloadTooLarge": detail("The body is over 1 MiB.", "Request body exceeds 1048576 bytes."),
		"RateLimited":     limited,
		"TooManyAttempts": throttled,
		"InvalidPage":     detail("The offset is past the last page.", "Invalid page."),
		"NotDeletable":    jsonResponse("The object may not be deleted here (your own account; an object synced from NetBox): non_field_errors says why.", ref("ValidationError")),
		"Conflict":        detail("Other objects depend on it, or the work is already running.", "Unable to delete object: other objects depend on it."),
		"Unavailable":     detail("This server does not do that work (no scheduler runs).", "This server runs no schedules."),
		"NotConfigured":   detail("No NetBox is configured.", "no NetBox to sync from: set inventory.netbox_url and inventory.netbox_token."),
		"BadGateway":      detail("NetBox refused, or what it sent could not be applied; nothing changed.", "netbox: GET /api/dcim/devices/…: 503 Service Unavailable"),
		"HubBulkQueued":   jsonResponse("On a hub: some sites did not answer within the timeout; the waiting elements carry their job's url.", ref("BulkExecuteResponse")),
		"HubJobQueued":    jsonResponse("On a hub, a site's command: the site did not answer within the timeout; read the job at its url (Location).", ref("HubJob")),
		"HubRefused":      jsonResponse("The hub refused the push: code and detail say why, expected which record it wants next (409).", ref("HubAnswer")),
		"ServerError":     jsonResponse("Internal error; quote the request_id (also in X-Request-ID) when reporting it.", ref("ServerError")),
	}
}

// csvExportDoc describes the CSV export's header, from the declaration.
func csvExportDoc() string {
	always, all := store.ExportHeader(store.CommandLogs, false), store.ExportHeader(store.CommandLogs, true)
	return "RFC 4180 with header " + strings.Join(always, ",") + "; include_output=true adds " +
		strings.Join(all[len(always):], ",") + "."
}
