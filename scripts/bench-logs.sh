#!/bin/sh
# Log views over real HTTP on the benchmark data set, warm and cold.
#
#   scripts/bench-logs.sh [LOGS]      (LOGS: 1000000 by default, or 5000000)
#   COLD_ONLY=1 scripts/bench-logs.sh [LOGS]   (the cold start alone)
#
# The data set is the one the Go benchmarks generate and cache in $TMPDIR
# (go test ./handlers -run '^$' -bench Statistics -benchtime 1x, with
# FIELDKIT_BENCH_LOGS=LOGS). The script builds fieldkit, serves a hard link of that
# database from a temporary data directory, and measures with wrk (apt install wrk):
# request rates of log pages, then a cold start: the server stopped, the database
# evicted from the OS page cache (vmtouch -e, apt install vmtouch; else
# /proc/sys/vm/drop_caches as root), started again, and the time from the start of the
# process to the first statistics and first log page of a constrained viewer answered.
# Nothing else may open the database while the script runs: the server opens it under
# another name, so with a write-ahead log of its own, and two logs of one file corrupt
# it. The script checkpoints the file first, and stops if it cannot.
# BENCH_RATES_ONLY=1 stops after the request rates; BENCH_UNCACHED_ONLY=1 measures
# only the pages without output (the log list, with and without a device_id filter),
# the commands list and the device list, each from the cache and uncached. Run it with
# the machine otherwise idle: wrk shares the cores with the server.
set -eu
logs=${1:-1000000}
case $logs in
*000000) name=$((logs / 1000000))m ;;
*) name=$logs ;;
esac
# FIELDKIT_BENCH_OUTPUT: the data set whose outputs the Go benchmarks padded to that size.
[ -n "${FIELDKIT_BENCH_OUTPUT:-}" ] && name=$name-o$FIELDKIT_BENCH_OUTPUT
db=${TMPDIR:-/tmp}/fieldkit-bench-$name.db
[ -f "$db" ] || { echo "no $db: run the Go benchmarks with FIELDKIT_BENCH_LOGS=$logs first" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is not installed" >&2; exit 1; }
# The server opens a link under another name, so the write-ahead log beside the file is
# not its own: pages left there would be missed, and its writes would corrupt the file.
# Write them into the file first (the benchmarks may exit without doing so).
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall(); c.close()' "$db"
[ -s "$db-wal" ] && { echo "$db-wal is not empty after a checkpoint: is the database open elsewhere?" >&2; exit 1; }
admin=0000000000000000000000000000000000b3nc4a
viewer=0000000000000000000000000000000000b3nc4b
work=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$(dirname "$0")/.."
CGO_ENABLED=0 go build -o "$work/fieldkit" .
mkdir "$work/data"
ln "$db" "$work/data/fieldkit.db"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
api=$base/api/plugins/toolkit/command-logs/

start() {
	"$work/fieldkit" serve --data "$work/data" --listen "127.0.0.1:$port" >"$work/serve.log" 2>&1 &
	pid=$!
}
stop() {
	kill "$pid" && wait "$pid" 2>/dev/null || true
	pid=
}
wait_ready() {
	until curl -sf -o /dev/null "$base/api/status/"; do
		kill -0 "$pid" 2>/dev/null || { echo "the server stopped:" >&2; cat "$work/serve.log" >&2; exit 1; }
		sleep 0.01
	done
}

# Log pages are kept in the server's list cache until the next committed write, so a
# repeated URL measures the cache. For the work of a page, every request of the
# "uncached" runs names a host of its own (the cache key holds the host), so none is
# ever served from the cache.
cat >"$work/uncached.lua" <<'LUA'
local threads = 0
function setup(thread)
	threads = threads + 1
	thread:set("tid", threads)
end
local n = 0
function request()
	n = n + 1
	wrk.headers["Host"] = "t" .. tid .. "-" .. n .. ".bench"
	return wrk.format()
end
LUA

if [ -z "${COLD_ONLY:-}" ]; then
start
wait_ready
echo "== $logs logs: request rates (wrk -t2 -c16 -d10s, after a 2 s warm-up)"
paths="?limit=50 ?limit=50&exclude=output ?limit=50&device_id=7 ?limit=50&device_id=7&exclude=output ?limit=50&cursor="
[ "${BENCH_UNCACHED_ONLY:-}" ] && paths="?limit=50&exclude=output ?limit=50&device_id=7&exclude=output"
# cpu is the server's CPU time so far, in clock ticks (user + system).
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
# measure WHAT WRK-ARGS…: a 2 s warm-up, then 10 s measured: the rate, and the server's
# CPU per request (which the other work on the machine moves far less than the rate).
measure() {
	what=$1
	shift
	wrk -t2 -c16 -d2s "$@" >/dev/null
	c0=$(cpu)
	out=$(wrk -t2 -c16 -d10s "$@")
	c1=$(cpu)
	echo "$out" | awk -v what="$what" -v ticks=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" '
		/ requests in / {n = $1} /Requests\/sec/ {rate = $2}
		END {printf "%s: %s req/s, server %.3f cpu-ms/req\n", what, rate, ticks * 1000 / hz / n}'
}
# rates URL KEY WHAT: the rate of URL repeated, then (for a page without output, or
# a list other than the logs') uncached.
rates() {
	# wrk counts any answer: make sure this one is a page
	curl -sf -o /dev/null -H "Authorization: Token $2" "$1" || { echo "$3: not answered with 200" >&2; exit 1; }
	measure "$3" -H "Authorization: Token $2" "$1"
	case $1 in *exclude=output | */commands/* | */devices/*)
		measure "$3, uncached" -s "$work/uncached.lua" -H "Authorization: Token $2" "$1"
		;;
	esac
}
# The ceiling on this machine at this moment: the server's cheapest endpoint.
measure "ceiling /api/status/" "$base/api/status/"
set -f # the paths are not file patterns
for path in $paths; do
	for key in $admin $viewer; do
		who=superuser
		[ $key = $viewer ] && who=constrained
		rates "$api$path" $key "$who $path"
	done
done
# The constrained viewer may see logs only: the other lists are the superuser's.
rates "$base/api/plugins/toolkit/commands/?limit=50" $admin "superuser commands ?limit=50"
rates "$base/api/dcim/devices/?limit=50" $admin "superuser devices ?limit=50"
stop
fi

[ "${BENCH_RATES_ONLY:-}" ] && exit 0
echo "== $logs logs: cold start (5 runs)"
for run in 1 2 3 4 5; do
	if command -v vmtouch >/dev/null; then
		vmtouch -eq "$work/data/fieldkit.db"
	else
		sync && echo 1 >/proc/sys/vm/drop_caches
	fi
	t0=$(date +%s.%N)
	start
	wait_ready
	t1=$(date +%s.%N)
	curl -sf -o /dev/null -H "Authorization: Token $viewer" "${api}statistics/"
	t2=$(date +%s.%N)
	curl -sf -o /dev/null -H "Authorization: Token $viewer" "$api?limit=50"
	t3=$(date +%s.%N)
	echo "$t0 $t1 $t2 $t3" | awk '{printf "run '"$run"': ready %.3f s, first statistics %.3f s, first log page %.3f s, all %.3f s\n", $2-$1, $3-$2, $4-$3, $4-$1}'
	stop
done
