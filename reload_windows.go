package main

// reloadRequests is nil on Windows, which has no SIGHUP: restart the service to apply a
// changed configuration (running executions finish first).
func reloadRequests() <-chan struct{} { return nil }
