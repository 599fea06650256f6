package main

import (
	"context"
	"fmt"

	"fieldkit/store"
)

// seedDemo makes a newcomer productive: an admin with a printed password and token.
// Seeding is idempotent: a second run reuses what the first made.
func seedDemo(ctx context.Context, e env, db *store.DB, base string) error {
	password := randomPassword()
	name, super := "admin", true
	uid, err := db.UserIDByName(ctx, name)
	if err != nil {
		if uid, err = db.CreateUser(ctx, store.UserInput{Username: &name, Password: &password, IsSuperuser: &super}, store.All); err != nil {
			return err
		}
	} else if err := db.SetPassword(ctx, uid, password); err != nil {
		return err
	}
	_, key, err := db.CreateToken(ctx, store.TokenInput{UserID: uid, WriteEnabled: true, Description: "demo"}, store.All)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\nFieldKit demo is ready at %s\n", base)
	fmt.Fprintf(e.stdout, "  web UI login: admin / %s\n", password)
	fmt.Fprintf(e.stdout, "  API token:    %s\n", key)
	fmt.Fprintf(e.stdout, "  try:          curl -H 'Authorization: Token %s' %s/api/plugins/toolkit/commands/\n\n", key, base)
	return nil
}
