//go:build !fieldkit_no_tzdata

package main

// The IANA time zone database, built in (about 450 kB): Windows has none of its own
// and a minimal Linux image may lack it, yet server.time_zone must work everywhere.
// The tag fieldkit_no_tzdata leaves it out; only the test that proves it is needed
// builds that way.
import _ "time/tzdata"
