package handlers

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"

	"fieldkit/store"
)

// requestUser is the requesting user, for writers that only get the request's context.
func requestUser(ctx context.Context) store.Principal {
	p, _ := ctx.Value(ctxPrincipal).(store.Principal)
	return p
}

func (a *API) userCRUD() crudSet {
	wr := Writer{
		Fields: []string{"username", "password", "first_name", "last_name", "email", "is_active", "is_superuser", "groups"},
		Create: func(ctx context.Context, f *form, guard store.Scope) (int64, error) {
			in := a.userInput(ctx, f, true)
			if err := f.Err(); err != nil {
				return 0, err
			}
			if in.IsSuperuser != nil && *in.IsSuperuser && !requestUser(ctx).IsSuperuser {
				return 0, errForbidden("Only a superuser may create a superuser.")
			}
			return a.DB.CreateUser(ctx, in, guard)
		},
		Update: func(ctx context.Context, id int64, f *form, partial bool, guard store.Scope) error {
			in := a.userInput(ctx, f, !partial)
			if err := f.Err(); err != nil {
				return err
			}
			if err := a.superuserOnly(ctx, id, in.IsSuperuser); err != nil {
				return err
			}
			return userWriteErr(a.DB.UpdateUser(ctx, id, in, guard))
		},
		Delete: func(ctx context.Context, id int64) error {
			if err := a.superuserOnly(ctx, id, nil); err != nil {
				return err
			}
			return userWriteErr(a.DB.DeleteUser(ctx, id, requestUser(ctx).ID))
		},
	}
	return crudOf(a, userResource, wr, a.DB.Users, func(u store.User) int64 { return u.ID }, a.renderUser)
}

// superuserOnly refuses a non-superuser who would change a superuser's account (its
// password above all) or anyone's superuser status: either would be an escalation.
func (a *API) superuserOnly(ctx context.Context, id int64, setSuper *bool) error {
	if requestUser(ctx).IsSuperuser {
		return nil
	}
	users, err := a.DB.Users(ctx, []int64{id})
	if err != nil || len(users) == 0 {
		return errors.Join(err, errNotFound())
	}
	if users[0].IsSuperuser || (setSuper != nil && *setSuper != users[0].IsSuperuser) {
		return errForbidden("Only a superuser may change a superuser or superuser status.")
	}
	return nil
}

// userWriteErr turns the store's lock-out refusals into 400s.
func userWriteErr(err error) error {
	switch {
	case errors.Is(err, store.ErrLastSuperuser):
		return badRequestNF("This would leave no active superuser.")
	case errors.Is(err, store.ErrDeleteSelf):
		return badRequestNF("You cannot delete your own account.")
	}
	return err
}

var usernameRE = regexp.MustCompile(`^[\pL\pN@.+_-]+$`)

func (a *API) userInput(ctx context.Context, f *form, create bool) store.UserInput {
	var in store.UserInput
	if s, ok := f.Str("username", create, 150); ok {
		if !usernameRE.MatchString(s) {
			f.Errs.Add("username", "Enter a valid username: letters, numbers and @/./+/-/_ characters only.")
		}
		in.Username = &s
	}
	if s, ok := f.Str("password", create, 0); ok {
		switch {
		case strings.TrimSpace(s) == "":
			f.Errs.Add("password", "This field may not be blank.")
		case len(s) > 72:
			f.Errs.Add("password", "Ensure this field has no more than 72 bytes.")
		}
		in.Password = &s
	}
	for name, dst := range map[string]**string{"first_name": &in.FirstName, "last_name": &in.LastName} {
		if s, ok := f.Str(name, false, 150); ok {
			*dst = &s
		}
	}
	if s, ok := f.Str("email", false, 254); ok {
		if s != "" && !validEmail(s) {
			f.Errs.Add("email", "Enter a valid email address.")
		}
		in.Email = &s
	}
	if b, ok := f.Boolean("is_active"); ok {
		in.IsActive = &b
	}
	if b, ok := f.Boolean("is_superuser"); ok {
		in.IsSuperuser = &b
	}
	if ids, ok := a.refs(ctx, f, "groups", store.TypeGroup); ok {
		in.Groups = &ids
	}
	return in
}

func validEmail(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	return ok && local != "" && domain != "" && !strings.ContainsAny(s, " \t\r\n<>,;") &&
		!strings.Contains(domain, "@") && strings.Contains(domain, ".")
}

func (a *API) renderUser(r *http.Request, u store.User, brief bool) any {
	n := briefUser(r, u.ID, u.Username)
	if brief {
		return n
	}
	groups := make([]any, len(u.Groups))
	for i, g := range u.Groups {
		groups[i] = briefGroup(r, g.ID, g.Name)
	}
	n["first_name"], n["last_name"], n["email"] = u.FirstName, u.LastName, u.Email
	n["is_active"], n["is_superuser"] = u.IsActive, u.IsSuperuser
	n["groups"] = groups
	n["date_joined"], n["last_login"] = stamp(u.DateJoined), stamp(u.LastLogin)
	n["created"], n["last_updated"] = stamp(u.Created), stamp(u.LastUpdated)
	return n
}

func (a *API) groupCRUD() crudSet {
	create := func(ctx context.Context, name *string, guard store.Scope) (int64, error) {
		return a.DB.CreateGroup(ctx, *name, guard) // required on create: set when the form has no errors
	}
	wr := formWriter([]string{"name"}, groupName, create, a.DB.UpdateGroup, a.DB.DeleteGroup)
	return crudOf(a, groupResource, wr, a.DB.Groups, func(g store.Group) int64 { return g.ID }, a.renderGroup)
}

// groupName reads a group's only writable field.
func groupName(_ context.Context, f *form, create bool) *string {
	if s, ok := f.Str("name", create, 150); ok {
		return &s
	}
	return nil
}

func (a *API) renderGroup(r *http.Request, g store.Group, brief bool) any {
	n := briefGroup(r, g.ID, g.Name)
	if brief {
		return n
	}
	n["user_count"] = g.UserCount
	n["created"], n["last_updated"] = stamp(g.Created), stamp(g.LastUpdated)
	return n
}
