//go:build !windows

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// reloadRequests delivers one value per SIGHUP, which otherwise would end the process.
func reloadRequests() <-chan struct{} {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP)
	out := make(chan struct{}, 1)
	go func() {
		for range sig {
			select {
			case out <- struct{}{}:
			default: // a reload is already pending
			}
		}
	}()
	return out
}
