package handlers

import (
	"net/http"
	"unicode/utf8"

	"fieldkit/store"
	"fieldkit/web"
)

// patchLogNotes serves PATCH command-logs/{id}/ {"notes": "..."}: a log's notes are the
// one part of it that may change after it was written, so that a runner can say why
// after the fact. Everything else records what ran and stays as it was: a body naming
// another field of the log is a 400 naming it. The log must be visible (404), and the
// requester its author or a holder of change on it (403). Each edit is logged, with
// who, which log and the notes' old and new lengths, never their text.
func (a *API) patchLogNotes(w http.ResponseWriter, r *http.Request) error {
	id, err := web.PathID(r)
	if err != nil {
		return err
	}
	load := a.rows(logResource)
	if _, err := visible(a, r, logResource, id, load); err != nil {
		return err
	}
	if err := a.mayEditNotes(r, id); err != nil {
		return err
	}
	f, err := web.DecodeForm(r, logFieldNames()...)
	if err != nil {
		return err
	}
	for name := range f.Raw {
		if name != "notes" && !f.Errs.Has(name) {
			f.Errs.Add(name, "A command log records what ran and cannot be changed: only its notes may be edited.")
		}
	}
	notes, _ := f.Str("notes", false, store.MaxNotes)
	if !f.Has("notes") {
		f.Errs.Add("notes", "This field is required.")
	}
	if err := f.Err(); err != nil {
		return err
	}
	old, err := a.DB.SetLogNotes(r.Context(), id, notes)
	if err != nil {
		return err
	}
	u := web.User(r.Context())
	a.Logger.Info("command log notes edited", "log_id", id, "username", u.Username, "user_id", u.ID,
		"old_length", utf8.RuneCountInString(old), "new_length", utf8.RuneCountInString(notes))
	rows, err := load(r.Context(), []int64{id})
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return web.NotFound()
	}
	web.Write(w, http.StatusOK, a.renderObject(r, logResource, logResource.Model, rows[0], full))
	return nil
}

// mayEditNotes lets the log's author, or a user whose change permission on command
// logs reaches this one, edit its notes.
func (a *API) mayEditNotes(r *http.Request, id int64) error {
	own, err := a.DB.Exists(r.Context(), store.TypeCommandLog, id,
		store.Expr{SQL: "t.user_id = ?", Args: []any{web.User(r.Context()).ID}})
	if err != nil || own {
		return err
	}
	scope, err := a.resScope(r, logResource, "change")
	if err != nil {
		return err
	}
	if scope.Granted {
		ok, err := a.DB.Exists(r.Context(), store.TypeCommandLog, id, scope.Expr)
		if err != nil || ok {
			return err
		}
	}
	return web.Forbidden("Only the log's author, or a user with change permission on command logs, may edit its notes.")
}

// logFieldNames are the names a log's body may hold without being unknown: its fields
// (each refused but notes) and the read-only parts of its representation.
func logFieldNames() []string {
	names := []string{"url", "display"}
	for _, f := range store.CommandLogs.Fields {
		if f.Readable() {
			names = append(names, f.Name)
		}
	}
	return names
}
