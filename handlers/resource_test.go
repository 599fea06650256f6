package handlers

import (
	"testing"

	"fieldkit/store"
)

// A declared resource no client may write (one filled by a sync, say) gets a list and a
// detail route and no write routes.
func TestDeclaredReadOnlyResource(t *testing.T) {
	e := newEnv(t)
	c := e.api.declared(&Resource{Model: store.CommandLogs, Path: pathCommandLogs})
	if c.list == nil || c.detail == nil {
		t.Fatal("no list or detail")
	}
	if c.create != nil || c.put != nil || c.patch != nil || c.del != nil || c.bulkPut != nil || c.bulkDel != nil {
		t.Fatal("a read-only resource has write handlers")
	}
	if w := e.api.declared(siteResource); w.create == nil || w.del == nil {
		t.Fatal("a writable resource lacks write handlers")
	}
}
