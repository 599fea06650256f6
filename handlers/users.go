package handlers

import (
	"context"
	"errors"

	"fieldkit/store"
	"fieldkit/web"
)

// userHooks: only a superuser may make a superuser, change a superuser's account (its
// password above all) or anyone's superuser status, or delete a superuser; nobody
// deletes their own account. Either would be an escalation or a lock-out. Setting a
// user's password or groups must leave that user holding nothing the writer does not
// hold: otherwise the writer could log in as someone more privileged, or join a group
// that grants more.
var userHooks = hooks{check: checkUser, beforeDelete: checkUserDelete}

func checkUser(ctx context.Context, a *API, f *web.Form, v store.Values, cur store.Row, _ bool) error {
	if len(f.Errs) > 0 || web.User(ctx).IsSuperuser {
		return nil
	}
	super, sent := v["is_superuser"].(bool)
	switch {
	case cur == nil && sent && super:
		return web.Forbidden("Only a superuser may create a superuser.")
	case cur != nil && (cur["is_superuser"] == true || sent && super != cur["is_superuser"]):
		return web.Forbidden("Only a superuser may change a superuser or superuser status.")
	}
	return checkUserGrant(ctx, a, v, cur)
}

// checkUserGrant refuses a password or group change that would leave the user with a
// grant beyond the writer's.
func checkUserGrant(ctx context.Context, a *API, v store.Values, cur store.Row) error {
	_, password := v["password"]
	groups, setGroups := v["groups"].([]int64)
	if !password && !setGroups {
		return nil
	}
	var id int64
	if cur != nil {
		id = cur.ID()
		if !setGroups {
			groups = rowIDs(cur["groups"])
		}
	}
	theirs, err := a.DB.GrantOf(ctx, id, groups, false)
	if err != nil {
		return err
	}
	mine, err := a.grantOf(ctx)
	if err != nil {
		return err
	}
	if !mine.Covers(theirs) {
		return web.Forbidden("You may not set the password or groups of a user who would then hold permissions you do not hold.")
	}
	return nil
}

// rowIDs are the ids of a loaded relation.
func rowIDs(v any) []int64 {
	rows, _ := v.([]store.Row)
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.ID()
	}
	return out
}

// grantOf is the requesting user's grant.
func (a *API) grantOf(ctx context.Context) (store.Grant, error) {
	p := web.User(ctx)
	return a.DB.GrantOf(ctx, p.ID, p.GroupIDs, p.IsSuperuser)
}

func checkUserDelete(ctx context.Context, a *API, id int64) error {
	if !web.User(ctx).IsSuperuser {
		rows, err := a.DB.Rows(ctx, store.Users, []int64{id})
		if err != nil || len(rows) == 0 {
			return errors.Join(err, web.NotFound())
		}
		if rows[0]["is_superuser"] == true {
			return web.Forbidden("Only a superuser may change a superuser or superuser status.")
		}
	}
	if id == web.User(ctx).ID {
		return store.ErrDeleteSelf
	}
	return nil
}
