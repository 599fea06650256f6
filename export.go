package main

import (
	"context"
	"errors"
)

// cmdExport is replaced by the streaming log export once store.ExportLogs lands.
func cmdExport(ctx context.Context, e env, args []string) error {
	return errors.New("export: not built yet")
}
