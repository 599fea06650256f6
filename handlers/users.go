package handlers

import (
	"context"
	"errors"

	"fieldkit/store"
	"fieldkit/web"
)

// userHooks: only a superuser may make a superuser, change a superuser's account (its
// password above all) or anyone's superuser status, or delete a superuser; nobody
// deletes their own account. Either would be an escalation or a lock-out.
var userHooks = hooks{check: checkUser, beforeDelete: checkUserDelete}

func checkUser(ctx context.Context, _ *API, f *web.Form, v store.Values, cur store.Row, _ bool) error {
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
	return nil
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
