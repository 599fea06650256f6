#!/usr/bin/env bash
# peers.sh - real SSH peers on 127.0.0.1 for FieldKit's integration tests.
#
#   .ci/peers.sh install   apt/npm packages the tests need (idempotent)
#   .ci/peers.sh start     fresh host keys, users and passwords; start the peers
#   .ci/peers.sh check     log in to both peers with sshpass and exercise them
#   .ci/peers.sh env       print `export` lines: source <(.ci/peers.sh env)
#   .ci/peers.sh up        install, start, then env: source <(sudo .ci/peers.sh up)
#   .ci/peers.sh stop      stop the peers, remove their users and state
#
# Peers (all state under $FIELDKIT_PEERS_DIR, default /tmp/fieldkit-peers):
#   linux  OpenSSH sshd on 127.0.0.1:2222, user fkuser, /bin/bash, password and
#          keyboard-interactive (PAM) auth: one exec channel per command.
#   frr    OpenSSH sshd on 127.0.0.1:2223, user fkfrr whose login shell is
#          FRR's vtysh (IOS-style CLI), password auth, no PAM banner. The FRR
#          daemons run in their own network and UTS namespaces (hostname
#          fk-frr, interfaces lo, eth0, eth1), so they never touch the host's
#          routes and their output is the same on every machine.
#   pg     PostgreSQL 15 (Debian's postgresql-15) on 127.0.0.1:2224, a cluster
#          made by initdb in the peers directory and run by pg_ctl as the
#          postgres user; a database and a user "fieldkit" with a random
#          password: FIELDKIT_TEST_PG_DSN (the hub's store).
#
# Must run as root (it adds users and starts sshd/FRR daemons). The users
# are machine-wide: a second set of peers on the same machine needs its own
# FIELDKIT_PEERS_DIR, ports and user names (FIELDKIT_PEERS_LINUX_USER,
# FIELDKIT_PEERS_FRR_USER).
set -euo pipefail

PEERS_DIR=${FIELDKIT_PEERS_DIR:-/tmp/fieldkit-peers}
SSHD_PORT=${FIELDKIT_PEERS_SSHD_PORT:-2222}
FRR_PORT=${FIELDKIT_PEERS_FRR_PORT:-2223}
PG_PORT=${FIELDKIT_PEERS_PG_PORT:-2224}
PG_BIN=/usr/lib/postgresql/15/bin
NPM_PREFIX=${FIELDKIT_NPM_PREFIX:-/tmp/fieldkit-npm}
LINUX_USER=${FIELDKIT_PEERS_LINUX_USER:-fkuser}
FRR_USER=${FIELDKIT_PEERS_FRR_USER:-fkfrr}
FRR_HOSTNAME=fk-frr
FRR_BIN=/usr/lib/frr
SSHD=/usr/sbin/sshd
DEB_PYTHON=/usr/bin/python3
VALIDATOR_PKG=@seriousme/openapi-schema-validator@2.11.0
VALIDATOR=$NPM_PREFIX/node_modules/.bin/validate-api
# playwright-core drives Debian's chromium for the web UI's browser tests (it never
# downloads a browser of its own).
PLAYWRIGHT_PKG=playwright-core@1.65.1
PLAYWRIGHT_DIR=$NPM_PREFIX
# Beside the peers: systemd (systemd-analyze verifies the service unit), util-linux
# (setpriv, used by the SysV script), and Wine with mingw-w64 to run the Windows build
# (its time zones) with a bcryptprimitives.dll built from testdata/wine. Ansible (with its
# bundled netbox.netbox collection, whose inventory plugin needs python3-tz) reads the
# inventory as a NetBox client.
APT_PACKAGES=(openssh-server openssh-client sshpass frr iproute2 procps
	python3-pynetbox ansible python3-tz chromium chromium-driver
	systemd util-linux wine64 gcc-mingw-w64-x86-64-win32 postgresql-15)

log() { printf 'peers: %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}
need_root() { [[ $(id -u) == 0 ]] || die "must run as root"; }

# retry N CMD... runs CMD up to N times, sleeping between tries: the Debian
# mirrors and the npm registry fail transiently now and then.
retry() {
	local n=$1 i
	shift
	for ((i = 1; ; i++)); do
		"$@" && return 0
		((i < n)) || return 1
		log "retrying in $((i * 5))s ($i/$n failed): $*"
		sleep $((i * 5))
	done
}

cmd_install() {
	need_root
	local missing=() p
	for p in "${APT_PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	if ((${#missing[@]})); then
		log "apt-get install ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		retry 3 apt-get update -q -q
		retry 3 apt-get install -y -q -q --no-install-recommends \
			-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
			"${missing[@]}" >/dev/null
	else
		log "apt packages already installed"
	fi
	if [[ -x $VALIDATOR ]]; then
		log "OpenAPI validator already installed: $VALIDATOR"
	else
		log "npm install $VALIDATOR_PKG into $NPM_PREFIX"
		retry 3 npm install --prefix "$NPM_PREFIX" --no-audit --no-fund \
			--loglevel=error "$VALIDATOR_PKG" >/dev/null
	fi
	[[ -x $VALIDATOR ]] || die "validator missing after install: $VALIDATOR"
	if [[ -f $PLAYWRIGHT_DIR/node_modules/playwright-core/package.json ]]; then
		log "playwright-core already installed in $PLAYWRIGHT_DIR"
	else
		log "npm install $PLAYWRIGHT_PKG into $PLAYWRIGHT_DIR"
		PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 retry 3 npm install --prefix "$PLAYWRIGHT_DIR" --no-audit --no-fund \
			--loglevel=error "$PLAYWRIGHT_PKG" >/dev/null
	fi
	[[ -f $PLAYWRIGHT_DIR/node_modules/playwright-core/package.json ]] || die "playwright-core missing after install"
}

random_password() {
	head -c 48 /dev/urandom | base64 -w0 | tr -dc 'A-Za-z0-9' | cut -c1-20
}

# port_in_use PORT is true while something listens on 127.0.0.1:PORT. ss
# looks without connecting, so sshd's log stays free of probe noise.
port_in_use() {
	if command -v ss >/dev/null; then
		[[ -n $(ss -Hltn "sport = :$1") ]]
	else
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
	fi
}

# running PID is true for a live process; a zombie waiting for its reaper
# counts as gone.
running() {
	local st
	st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	[[ $st != Z* ]]
}

pid_alive() { [[ -f $1 ]] && running "$(cat "$1")"; }

# kill_pidfile FILE stops the process named in FILE and waits for it to go.
kill_pidfile() {
	local f=$1 pid i
	[[ -f $f ]] || return 0
	pid=$(cat "$f")
	if running "$pid"; then
		kill "$pid" 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do
			running "$pid" || break
			sleep 0.1
		done
		if running "$pid"; then kill -9 "$pid" 2>/dev/null || true; fi
	fi
	rm -f "$f"
}

# ensure_user NAME SHELL [GROUPS] creates or updates a local test user whose
# home lives in the peers directory.
ensure_user() {
	local name=$1 shell=$2 groups=${3:-} home=$PEERS_DIR/home/$1
	mkdir -p "$home"
	if id "$name" >/dev/null 2>&1; then
		usermod -d "$home" -s "$shell" ${groups:+-G "$groups"} "$name"
	else
		useradd -M -d "$home" -s "$shell" -c 'FieldKit CI peer' \
			${groups:+-G "$groups"} "$name"
	fi
	chown "$name:" "$home"
	chmod 700 "$home"
}

write_sshd_config() {
	local name=$1 port=$2 user=$3 pam=$4
	cat >"$PEERS_DIR/sshd-$name.conf" <<EOF
# FieldKit CI peer "$name": a private sshd, not the system one.
Port $port
ListenAddress 127.0.0.1
HostKey $PEERS_DIR/ssh/host_ed25519_key
HostKey $PEERS_DIR/ssh/host_ecdsa_key
HostKey $PEERS_DIR/ssh/host_rsa_key
PidFile $PEERS_DIR/sshd-$name.pid
AllowUsers $user
PermitRootLogin no
PasswordAuthentication yes
KbdInteractiveAuthentication $pam
UsePAM $pam
PermitEmptyPasswords no
PubkeyAuthentication no
AuthorizedKeysFile none
PrintMotd no
PrintLastLog no
UseDNS no
X11Forwarding no
AllowTcpForwarding no
AllowAgentForwarding no
# Tests open many sessions at once (bulk execution); the defaults
# (MaxStartups 10:30:100) would drop some of them at random.
MaxStartups 200
MaxSessions 64
LoginGraceTime 30
LogLevel VERBOSE
EOF
}

start_sshd() {
	local name=$1 port=$2
	"$SSHD" -t -f "$PEERS_DIR/sshd-$name.conf" || die "bad sshd config for $name"
	# Without -D sshd binds, writes its pid file and then detaches.
	"$SSHD" -f "$PEERS_DIR/sshd-$name.conf" -E "$PEERS_DIR/sshd-$name.log"
	local i
	for ((i = 0; i < 50; i++)); do
		port_in_use "$port" && pid_alive "$PEERS_DIR/sshd-$name.pid" && return 0
		sleep 0.1
	done
	die "sshd $name did not start: see $PEERS_DIR/sshd-$name.log"
}

frr_daemons() {
	local d out=()
	# FRR >= 9 moves configuration into mgmtd, which must start first.
	for d in mgmtd zebra staticd; do
		[[ -x $FRR_BIN/$d ]] && out+=("$d")
	done
	printf '%s\n' "${out[@]}"
}

# write_frr_files lays out a private FRR instance: its own config directory,
# vty sockets and zserv socket, so it neither reads /etc/frr nor talks to a
# system FRR.
write_frr_files() {
	local f=$PEERS_DIR/frr
	mkdir -p "$f/etc" "$f/run" "$f/log"
	cat >"$f/etc/frr.conf" <<EOF
frr defaults traditional
hostname $FRR_HOSTNAME
service integrated-vtysh-config
!
ip route 203.0.113.0/24 192.0.2.2
!
interface eth0
 description uplink
!
interface lo
 description loopback
!
EOF
	# vtysh runs in the host's UTS namespace: without this its prompt would
	# be the machine's hostname.
	printf 'service integrated-vtysh-config\nhostname %s\n' "$FRR_HOSTNAME" \
		>"$f/etc/vtysh.conf"
	cat >"$f/start-daemons.sh" <<EOF
#!/bin/sh
# Starts the FieldKit CI FRR daemons; \$1 = ns when run under unshare.
set -e
if [ "\$1" = ns ]; then
	hostname $FRR_HOSTNAME
	ip link set lo up
	if ip link add eth0 type veth peer name eth1 2>/dev/null; then
		ip addr add 192.0.2.1/24 dev eth0
		ip addr add 198.51.100.1/24 dev eth1
		ip link set eth0 up
		ip link set eth1 up
	fi
fi
for d in $(frr_daemons | tr '\n' ' '); do
	$FRR_BIN/\$d -d -u frr -g frr -A 127.0.0.1 -P 0 -f /dev/null \\
		--vty_socket $f/run -z $f/run/zserv.api -i $f/run/\$d.pid \\
		--log file:$f/log/\$d.log 2>>$f/log/start.err
done
EOF
	cat >"$PEERS_DIR/bin/fk-vtysh" <<EOF
#!/bin/sh
# Login shell of $FRR_USER: sshd runs it with no argument for a shell
# session and with "-c COMMAND" for an exec request, both of which vtysh
# understands.
exec /usr/bin/vtysh --config_dir $f/etc --vty_socket $f/run "\$@"
EOF
	chmod 755 "$PEERS_DIR/bin/fk-vtysh" "$f/start-daemons.sh"
	touch "$f/etc/frr.conf.sav"
	chown -R frr:frr "$f"
	# fkfrr reaches the vty sockets through group frrvty and writes
	# frr.conf ("write memory") through group frr.
	chmod 770 "$f/etc" "$f/run"
	chmod 660 "$f/etc/"*
}

start_frr() {
	local f=$PEERS_DIR/frr d i
	[[ -x $FRR_BIN/zebra ]] || die "FRR is not installed (run: $0 install)"
	if unshare --net --uts true 2>/dev/null; then
		unshare --net --uts "$f/start-daemons.sh" ns
	else
		log "warning: no namespaces here; FRR runs in the host network namespace"
		"$f/start-daemons.sh" host
	fi
	for d in $(frr_daemons); do
		for ((i = 0; i < 50; i++)); do
			[[ -S $f/run/$d.vty ]] && break
			sleep 0.1
		done
		[[ -S $f/run/$d.vty ]] || die "FRR $d did not start: see $f/log/"
	done
	# Push frr.conf to the daemons, as frrinit.sh does with "vtysh -b".
	/usr/bin/vtysh --config_dir "$f/etc" --vty_socket "$f/run" -b >/dev/null ||
		die "vtysh -b failed"
}

# start_pg makes a PostgreSQL cluster of its own in the peers directory (initdb as the
# postgres user, which Debian's package creates) and starts it on 127.0.0.1:$PG_PORT,
# its socket in the same directory; then a database and a user "fieldkit".
start_pg() {
	local pw=$1 d=$PEERS_DIR/pg
	[[ -x $PG_BIN/initdb ]] || die "PostgreSQL 15 is not installed (run: $0 install)"
	mkdir -p "$d"
	chown postgres: "$d"
	chmod 700 "$d"
	(umask 077 && printf '%s\n' "$pw" >"$d/pwfile")
	chown postgres: "$d/pwfile"
	runuser -u postgres -- "$PG_BIN/initdb" -D "$d/data" -A scram-sha-256 --pwfile="$d/pwfile" \
		-U postgres -E UTF8 --locale=C.UTF-8 >"$d/initdb.log" 2>&1 || die "initdb failed: see $d/initdb.log"
	rm -f "$d/pwfile"
	# Tests start and stop many connections; fsync off: the cluster is thrown away.
	runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$d/data" -l "$d/postgres.log" -w -t 60 start \
		-o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $d -c fsync=off -c max_connections=200" >/dev/null ||
		die "PostgreSQL did not start: see $d/postgres.log"
	PGPASSWORD=$pw psql -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 \
		-c "CREATE ROLE fieldkit LOGIN PASSWORD '$pw'" -c "CREATE DATABASE fieldkit OWNER fieldkit" >/dev/null ||
		die "PostgreSQL: cannot make the fieldkit database"
}

stop_pg() {
	local d=$PEERS_DIR/pg
	[[ -f $d/data/postmaster.pid ]] || return 0
	if ! runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$d/data" -m fast -w -t 60 stop >/dev/null 2>&1; then
		local pid
		pid=$(head -n 1 "$d/data/postmaster.pid")
		running "$pid" && kill -9 "$pid" 2>/dev/null || true
	fi
}

cmd_start() {
	need_root
	local b
	for b in "$SSHD" /usr/bin/vtysh /usr/bin/ssh-keygen unshare ip "$PG_BIN/initdb" psql runuser; do
		command -v "$b" >/dev/null || die "$b not found (run: $0 install)"
	done
	cmd_stop >/dev/null 2>&1 || true
	port_in_use "$SSHD_PORT" && die "127.0.0.1:$SSHD_PORT is in use (set FIELDKIT_PEERS_SSHD_PORT)"
	port_in_use "$FRR_PORT" && die "127.0.0.1:$FRR_PORT is in use (set FIELDKIT_PEERS_FRR_PORT)"
	port_in_use "$PG_PORT" && die "127.0.0.1:$PG_PORT is in use (set FIELDKIT_PEERS_PG_PORT)"
	mkdir -p "$PEERS_DIR"/{ssh,bin,home}
	chmod 755 "$PEERS_DIR" "$PEERS_DIR/bin" "$PEERS_DIR/home"
	mkdir -p /run/sshd && chmod 755 /run/sshd # sshd's privilege separation dir

	local t
	for t in ed25519 ecdsa rsa; do
		ssh-keygen -q -t "$t" -N '' -C "fieldkit-peer-$t" -f "$PEERS_DIR/ssh/host_${t}_key"
	done
	: >"$PEERS_DIR/known_hosts"
	local port
	for port in "$SSHD_PORT" "$FRR_PORT"; do
		for t in ed25519 ecdsa rsa; do
			printf '[127.0.0.1]:%s %s\n' "$port" \
				"$(cut -d' ' -f1,2 "$PEERS_DIR/ssh/host_${t}_key.pub")" >>"$PEERS_DIR/known_hosts"
		done
	done
	chmod 644 "$PEERS_DIR/known_hosts"

	local linux_pw frr_pw pg_pw
	linux_pw=$(random_password)
	frr_pw=$(random_password)
	pg_pw=$(random_password)
	write_frr_files
	ensure_user "$LINUX_USER" /bin/bash
	ensure_user "$FRR_USER" "$PEERS_DIR/bin/fk-vtysh" frrvty,frr
	printf '%s:%s\n' "$LINUX_USER" "$linux_pw" "$FRR_USER" "$frr_pw" | chpasswd

	start_frr
	write_sshd_config linux "$SSHD_PORT" "$LINUX_USER" yes
	write_sshd_config frr "$FRR_PORT" "$FRR_USER" no
	start_sshd linux "$SSHD_PORT"
	start_sshd frr "$FRR_PORT"
	start_pg "$pg_pw"

	(
		umask 077
		{
			printf 'export FIELDKIT_TEST_SSHD_ADDR=%q\n' "127.0.0.1:$SSHD_PORT"
			printf 'export FIELDKIT_TEST_SSHD_USER=%q\n' "$LINUX_USER"
			printf 'export FIELDKIT_TEST_SSHD_PASSWORD=%q\n' "$linux_pw"
			printf 'export FIELDKIT_TEST_FRR_ADDR=%q\n' "127.0.0.1:$FRR_PORT"
			printf 'export FIELDKIT_TEST_FRR_USER=%q\n' "$FRR_USER"
			printf 'export FIELDKIT_TEST_FRR_PASSWORD=%q\n' "$frr_pw"
			printf 'export FIELDKIT_TEST_FRR_HOSTNAME=%q\n' "$FRR_HOSTNAME"
			printf 'export FIELDKIT_TEST_KNOWN_HOSTS=%q\n' "$PEERS_DIR/known_hosts"
			printf 'export FIELDKIT_TEST_PG_DSN=%q\n' "postgres://fieldkit:$pg_pw@127.0.0.1:$PG_PORT/fieldkit?sslmode=disable"
		} >"$PEERS_DIR/env"
	)
	log "started: linux sshd 127.0.0.1:$SSHD_PORT ($LINUX_USER), FRR vtysh 127.0.0.1:$FRR_PORT ($FRR_USER), PostgreSQL 127.0.0.1:$PG_PORT"
	log "use them with: source <($0 env)"
}

cmd_stop() {
	need_root
	local f=$PEERS_DIR/frr d
	kill_pidfile "$PEERS_DIR/sshd-linux.pid"
	kill_pidfile "$PEERS_DIR/sshd-frr.pid"
	for d in staticd zebra mgmtd; do
		kill_pidfile "$f/run/$d.pid"
	done
	stop_pg
	local u pids
	for u in "$LINUX_USER" "$FRR_USER"; do
		id "$u" >/dev/null 2>&1 || continue
		# Sessions a test left open outlive the listener; end them so the
		# user can go.
		pids=$(pgrep -u "$u" || true)
		if [[ -n $pids ]]; then
			# shellcheck disable=SC2086
			kill $pids 2>/dev/null || true
			sleep 0.5
		fi
		userdel "$u" 2>/dev/null || usermod -L "$u" || true
	done
	rm -rf "$PEERS_DIR"
	log "stopped"
}

cmd_env() {
	[[ -r $PEERS_DIR/env ]] || die "peers are not started (run: $0 start)"
	cat "$PEERS_DIR/env"
	[[ -x /usr/bin/chromium ]] && printf 'export FIELDKIT_TEST_CHROMIUM=%q\n' /usr/bin/chromium
	[[ -x /usr/bin/chromedriver ]] && printf 'export FIELDKIT_TEST_CHROMEDRIVER=%q\n' /usr/bin/chromedriver
	[[ -x $DEB_PYTHON ]] && printf 'export FIELDKIT_TEST_PYTHON=%q\n' "$DEB_PYTHON"
	[[ -x $VALIDATOR ]] && printf 'export FIELDKIT_OPENAPI_VALIDATOR=%q\n' "$VALIDATOR"
	[[ -f $PLAYWRIGHT_DIR/node_modules/playwright-core/package.json ]] &&
		printf 'export FIELDKIT_TEST_PLAYWRIGHT_DIR=%q\n' "$PLAYWRIGHT_DIR"
	return 0
}

# peer_ssh PASSWORD PORT USER [SSH ARGS...] runs ssh with password auth only,
# checking the host key against the generated known_hosts.
peer_ssh() {
	local pw=$1 port=$2 user=$3
	shift 3
	SSHPASS=$pw sshpass -e ssh -p "$port" -l "$user" \
		-o UserKnownHostsFile="$PEERS_DIR/known_hosts" -o StrictHostKeyChecking=yes \
		-o PreferredAuthentications=password,keyboard-interactive \
		-o PubkeyAuthentication=no -o NumberOfPasswordPrompts=1 \
		-o ConnectTimeout=10 -o LogLevel=ERROR 127.0.0.1 "$@"
}

expect_in() {
	local what=$1 text=$2
	grep -qF -- "$what" <<<"$text" || {
		printf '%s\n' "$text" >&2
		die "check failed: output lacks: $what"
	}
}

cmd_check() {
	command -v sshpass >/dev/null || die "sshpass not installed"
	# shellcheck disable=SC1090
	source <(cmd_env)
	local out mark
	out=$(peer_ssh "$FIELDKIT_TEST_SSHD_PASSWORD" "$SSHD_PORT" "$LINUX_USER" 'id -un; uname -s')
	expect_in "$LINUX_USER" "$out"
	expect_in Linux "$out"
	log "ok: linux peer runs commands over an exec channel"

	out=$(peer_ssh "$FIELDKIT_TEST_FRR_PASSWORD" "$FRR_PORT" "$FRR_USER" 'show version')
	expect_in FRRouting "$out"
	mark="fieldkit-check-$RANDOM"
	# An interactive session, the way the cisco_ios driver talks to a device.
	out=$(printf '%s\n' 'terminal length 0' 'show interface brief' 'configure terminal' \
		'interface lo' " description $mark" 'end' 'show bogus' 'exit' |
		peer_ssh "$FIELDKIT_TEST_FRR_PASSWORD" "$FRR_PORT" "$FRR_USER" -tt 2>&1)
	expect_in "$FRR_HOSTNAME# " "$out"
	expect_in "$FRR_HOSTNAME(config-if)# " "$out"
	expect_in "% Unknown command: show bogus" "$out"
	expect_in "eth0" "$out"
	out=$(peer_ssh "$FIELDKIT_TEST_FRR_PASSWORD" "$FRR_PORT" "$FRR_USER" 'show running-config')
	expect_in "description $mark" "$out"
	# vtysh -c takes several lines in one exec request; put lo back as it was.
	peer_ssh "$FIELDKIT_TEST_FRR_PASSWORD" "$FRR_PORT" "$FRR_USER" \
		$'configure terminal\ninterface lo\ndescription loopback\nend' >/dev/null
	out=$(peer_ssh "$FIELDKIT_TEST_FRR_PASSWORD" "$FRR_PORT" "$FRR_USER" 'show running-config')
	expect_in "description loopback" "$out"
	log "ok: FRR peer: vtysh shell, config change visible in a new session"

	if peer_ssh wrong-password "$SSHD_PORT" "$LINUX_USER" true >/dev/null 2>&1; then
		die "check failed: linux peer accepted a wrong password"
	fi
	if peer_ssh wrong-password "$FRR_PORT" "$FRR_USER" 'show version' >/dev/null 2>&1; then
		die "check failed: FRR peer accepted a wrong password"
	fi
	log "ok: wrong passwords are refused"

	out=$(psql "$FIELDKIT_TEST_PG_DSN" -tA -v ON_ERROR_STOP=1 \
		-c 'CREATE TABLE peers_check (id BIGINT PRIMARY KEY)' \
		-c 'INSERT INTO peers_check VALUES (1) ON CONFLICT (id) DO NOTHING RETURNING id' \
		-c 'SELECT count(*) FROM peers_check' -c 'DROP TABLE peers_check' 2>&1) || die "PostgreSQL: $out"
	expect_in 1 "$out"
	log "ok: PostgreSQL takes the fieldkit user's tables"
}

# cmd_up installs and starts everything the tests need and prints their variables: the
# one command a newcomer runs, as source <(sudo bash .ci/peers.sh up).
cmd_up() {
	cmd_install >&2
	cmd_start >&2
	cmd_env
}

case ${1:-} in
install) cmd_install ;;
start) cmd_start ;;
up) cmd_up ;;
stop) cmd_stop ;;
env) cmd_env ;;
check) cmd_check ;;
*)
	echo "usage: $0 install|start|up|stop|env|check" >&2
	exit 2
	;;
esac
