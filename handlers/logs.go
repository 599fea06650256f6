package handlers

import (
	"encoding/json"
	"net/http"

	"fieldkit/store"
)

// logRef is a log's command or device: the link while the object exists, the name always.
// Once the object is deleted "url" is left out rather than null: pynetbox (7.x) takes any
// nested dict with a "url" key for a record and parses the url, failing on null, so one
// log of a deleted device would break every log listing it reads.
func logRef(r *http.Request, listPath string, id int64, name string) nested {
	n := nested{"id": nil, "name": name, "display": name}
	if id != 0 {
		n["id"], n["url"] = id, objectURL(r, listPath, id)
	}
	return n
}

func (a *API) renderLog(r *http.Request, l store.CommandLog, brief bool) any {
	n := nested{"id": l.ID, "url": objectURL(r, pathCommandLogs, l.ID), "display": l.CommandName + " on " + l.DeviceName}
	if brief {
		return n
	}
	n["command"] = logRef(r, pathCommands, l.CommandID, l.CommandName)
	n["device"] = logRef(r, pathDevices, l.DeviceID, l.DeviceName)
	n["command_type"] = l.CommandType
	n["output"] = l.Output
	n["username"] = l.Username
	n["user"] = nil
	if l.UserID != 0 {
		n["user"] = briefUser(r, l.UserID, l.Username)
	}
	n["execution_time"] = stamp(l.ExecutionTime)
	n["success"] = l.Success
	n["error_message"] = l.ErrorMessage
	n["execution_duration"] = l.ExecutionDuration
	n["parsed_output"] = rawJSON(l.ParsedOutput)
	n["syntax_error"] = rawJSON(l.SyntaxError)
	n["created"] = stamp(l.Created)
	n["last_updated"] = stamp(l.LastUpdated)
	return n
}

// rawJSON passes stored JSON through; "" or anything unreadable is null.
func rawJSON(s string) any {
	if s == "" || !json.Valid([]byte(s)) {
		return nil
	}
	return json.RawMessage(s)
}

// logHandlers are the log endpoints: a list and one parameter route whose static names
// (statistics, export) are dispatched in routes.go.
type logHandlers struct {
	list, detail, statistics, export handlerFunc
}

func (a *API) logCRUD() logHandlers {
	id := func(l store.CommandLog) int64 { return l.ID }
	return logHandlers{
		list:       listHandler(a, logResource, a.DB.Logs, id, a.renderLog),
		detail:     detailHandler(a, logResource, a.DB.Logs, a.renderLog),
		statistics: a.logStatistics,
		export:     a.logExport,
	}
}

// objectURL is the absolute URL of one object under a list path.
func objectURL(r *http.Request, listPath string, id int64) string {
	return absURL(r, listPath+itoa(id)+"/")
}

// briefUser is a user's nested form.
func briefUser(r *http.Request, id int64, username string) nested {
	return nested{"id": id, "url": objectURL(r, pathUsers, id), "display": username, "username": username}
}
