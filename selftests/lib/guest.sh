# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for test scripts, sourced inside the guest:
#
#   . "$REPO/selftests/lib/guest.sh"
#
# The environment comes from the host (lib/vm.sh): GUEST (a|b), NGUESTS,
# MY_IP, PEER_IP, MY_IP6, PEER_IP6, REPO, RESULTS, KVER, RXE_IMPL...
#
# Checks print "ok - what" or "not ok - what" plus the end of the
# command's output and its exit code; `finish` exits non-zero when any
# check failed. The full output of every check goes to
# $RESULTS/$GUEST/checks.log, failed descriptions to $RESULTS/$GUEST/failed.
#
#   check "what" cmd args...         cmd must succeed
#   expect_fail "what" cmd args...   cmd must fail
#   check_match "what" REGEX cmd...  cmd must succeed and print a line matching REGEX
#   show cmd args...                 print "$ cmd" and all its output; must succeed
#   fail "why"                       record a failure
#   finish                           summary and exit status; call it last
#   have_tool NAME                   $RXE_TOOLS/NAME, a helper of lib/*.c the
#                                    host built, is there (else its log)
#   host_check "what" cmd args...    cmd runs on the host once the guests are
#                                    off, in $RESULTS/$GUEST; must succeed
#
# External commands run under `timeout $CHECK_TIMEOUT` (default 120 s);
# shell functions run as they are.

set -euo pipefail

GUEST=${GUEST:-a}
NGUESTS=${NGUESTS:-1}
RESULTS=${RESULTS:-/tmp/rxe-results}
CHECK_TIMEOUT=${CHECK_TIMEOUT:-120}
BARRIER_TIMEOUT=${BARRIER_TIMEOUT:-120}
# Per-guest implementation: RXE_IMPL_A / RXE_IMPL_B override RXE_IMPL.
_impl_var=RXE_IMPL_${GUEST^^}
RXE_IMPL=${!_impl_var:-${RXE_IMPL:-ours}}
RXE_KO=${RXE_KO:-$REPO/rdma_rxe.ko}
export RXE_IMPL RXE_KO

_out=$RESULTS/$GUEST
mkdir -p "$_out"
_checks=0
_failed=()
_finished=0

# Unexpected errors outside a check (set -e) must still say where.
_on_exit() {
	local rc=$?

	[ "$_finished" = 1 ] && return
	echo "not ok - test script aborted with status $rc (a command outside a check failed; see above)"
	echo "test script aborted with status $rc" >>"$_out/failed"
	[ "$rc" != 0 ] || exit 1
}
trap _on_exit EXIT
trap 'echo "# error: \"$BASH_COMMAND\" failed with status $? at ${BASH_SOURCE[0]}:$LINENO"' ERR

_record_failure() {
	_failed+=("$1")
	echo "$1" >>"$_out/failed"
}

# _check_log: set $log to the file a check's output goes to, on the
# guest's tmpfs. One per process and call depth, so that a check inside
# another check's command or in a background subshell has its own; it is
# overwritten, never removed. mktemp and rm would cost two processes,
# a quarter of a second under TCG, for each of the thousand checks of a
# suite run.
_check_log() {
	log=/tmp/rxe-check.$BASHPID.${#FUNCNAME[@]}
}

# _run LOG cmd...: run cmd with stdout+stderr to LOG, return its status.
# Sets _took to the time it took ("1.23s").
_run() {
	local log=$1 rc=0 t0=${EPOCHREALTIME/./} up

	shift
	# Which command a hung test is in: the last of these without a result.
	# The guest's uptime on each says where a slow test spends its time.
	read -r up _ </proc/uptime
	echo ">>> [$up] $*" >>"$_out/checks.log"
	if [ "$(type -t "$1")" = file ]; then
		timeout -k 5 "$CHECK_TIMEOUT" stdbuf -oL -eL "$@" >"$log" 2>&1 </dev/null || rc=$?
		[ "$rc" != 124 ] || echo "(timed out after ${CHECK_TIMEOUT}s)" >>"$log"
	else
		"$@" >"$log" 2>&1 </dev/null || rc=$?
	fi
	t0=$((${EPOCHREALTIME/./} - t0))
	printf -v _took '%d.%02ds' $((t0 / 1000000)) $((t0 / 10000 % 100))
	return "$rc"
}

# _report OK WHAT LOG RC: print and record one check.
_report() {
	local ok=$1 what=$2 log=$3 rc=$4 verdict=ok

	_checks=$((_checks + 1))
	[ "$ok" = 1 ] || verdict="not ok"
	{
		echo "=== $verdict - $what (exit $rc, $_took)"
		cat "$log"
	} >>"$_out/checks.log"
	if [ "$ok" = 1 ]; then
		echo "ok - $what"
		[ "${RXE_VERBOSE:-0}" != 1 ] || sed 's/^/    /' "$log"
	else
		echo "not ok - $what"
		tail -n 40 "$log" | sed 's/^/    /'
		echo "    (exit code $rc)"
		_record_failure "$what"
		_failure_state
	fi
}

# counters [DEV]: all of a device's hw counters, for the log.
counters() {
	rdma statistic show link "${1:-rxe0}/1"
}

# failure_state: what rxe0 looked like after a failed check, whichever
# driver runs it: the counters say whether packets were lost, retried or
# dropped, the QPs where they stand. A test may define its own.
failure_state() {
	if [ -n "${_mcast_before:-}" ]; then
		echo "multicast before: $_mcast_before"
		echo "multicast now:    $(mcast_counts)"
	fi
	[ -e /sys/class/infiniband/rxe0 ] || return 0
	echo "state of $(hostname) after the failure:"
	counters rxe0 | fold -s -w 150
	rdma res show qp link rxe0/1
}

# After a failed check, failure_state(), so that a failure seen only in a
# CI log can still say why.
_failure_state() {
	failure_state 2>&1 | head -n 30 | sed 's/^/    | /' || true
}

check() {
	local what=$1 log rc=0

	shift
	_check_log
	_run "$log" "$@" || rc=$?
	_report "$((rc == 0))" "$what" "$log" "$rc"
	return 0
}

expect_fail() {
	local what=$1 log rc=0

	shift
	_check_log
	_run "$log" "$@" || rc=$?
	[ "$rc" != 124 ] || echo "(a timeout is not the expected failure)" >>"$log"
	_report "$((rc != 0 && rc != 124))" "$what" "$log" "$rc"
	return 0
}

check_match() {
	local what=$1 regex=$2 log rc=0 ok=0

	shift 2
	_check_log
	_run "$log" "$@" || rc=$?
	if [ "$rc" = 0 ]; then
		if grep -qE -- "$regex" "$log"; then
			ok=1
		else
			echo "(no line matches /$regex/)" >>"$log"
		fi
	fi
	_report "$ok" "$what" "$log" "$rc"
	return 0
}

# show cmd args...: print "$ cmd args" and the command's whole output, for
# demos and debugging; a failure is recorded like a failed check.
show() {
	local log rc=0

	_check_log
	echo "\$ $*"
	_run "$log" "$@" || rc=$?
	cat "$log"
	{
		echo "=== show: $* (exit $rc, $_took)"
		cat "$log"
	} >>"$_out/checks.log"
	_checks=$((_checks + 1))
	if [ "$rc" != 0 ]; then
		echo "not ok - $* (exit code $rc)"
		_record_failure "$*"
	fi
	return 0
}

fail() {
	_checks=$((_checks + 1))
	echo "not ok - $*"
	_record_failure "$*"
}

# info "text": a comment line in the test log.
info() {
	echo "# $*"
}

# have_tool NAME: the host built test helper NAME into $RXE_TOOLS before
# the guests booted (lib/common.sh: build_tools); if it could not, say why.
have_tool() {
	[ -e "${RXE_TOOLS:-}/$1" ] && return 0
	if [ -z "${RXE_TOOLS:-}" ]; then
		echo "RXE_TOOLS is not set: run the test through run.sh or vm.sh, which build the helpers"
	else
		echo "the host did not build $1; its compiler said:"
		cat "$RXE_TOOLS/$1.log" 2>/dev/null || echo "(no $RXE_TOOLS/$1.log)"
	fi
	return 1
}

# host_check "what" cmd args...: a check that the host runs, at its own
# speed, once the guests are off (lib/vm.sh: vm_host_checks), in this
# guest's results folder: name the files there (capture_stop copies a
# capture in) by their names alone. For judging captures with tools whose
# start alone takes seconds under TCG (tshark, scapy): use the host's
# /usr/bin/python3 (PATH may name another). It reports in test.log after
# the guest's own checks, and fails the test like them.
host_check() {
	local what=$1

	shift
	printf '%s\t%s\n' "$what" "${*@Q}" >>"$_out/host-checks"
	info "on the host, once the guests are off: $what"
}

# checks_log "text": a line in checks.log only, for whoever reads a failure.
checks_log() {
	echo "$*" >>"$_out/checks.log"
}

finish() {
	_finished=1
	echo "# guest $GUEST: $_checks checks, ${#_failed[@]} failed"
	if [ "${#_failed[@]}" != 0 ]; then
		printf '#   failed: %s\n' "${_failed[@]}"
		exit 1
	fi
	exit 0
}

# --- background commands ---------------------------------------------------

declare -A _bg_pid

# bg NAME cmd...: start cmd in the background, output to $RESULTS/$GUEST/NAME.log.
bg() {
	local name=$1

	shift
	# Line-buffered, as in _run(), so that a command the timeout kills
	# still leaves what it printed. timeout itself must be the background
	# process (not a shell function around it): bg_kill signals $!.
	timeout -k 5 "$CHECK_TIMEOUT" stdbuf -oL -eL "$@" >"$_out/$name.log" 2>&1 </dev/null &
	_bg_pid[$name]=$!
}

# bg_wait NAME: wait for it and return its exit status (use it in a check:
# check "server finished" bg_wait srv). Prints its output.
bg_wait() {
	local name=$1 rc=0

	wait "${_bg_pid[$name]}" || rc=$?
	cat "$_out/$name.log"
	return "$rc"
}

# bg_kill NAME: stop it, if it still runs.
bg_kill() {
	kill "${_bg_pid[$1]}" 2>/dev/null || true
	wait "${_bg_pid[$1]}" 2>/dev/null || true
}

# nap SECONDS: sleep without a fork (each process costs ~0.05 s under
# TCG, more than the polls below wait): a read that times out on a FIFO
# nobody writes to (the guest has no /dev/fd for the usual <(:)).
mkfifo "/tmp/rxe-nap.$$.fifo"
exec {_nap_fd}<>"/tmp/rxe-nap.$$.fifo"
nap() {
	read -rt "$1" -u "$_nap_fd" _ || true
}

# _poll TENTHS CMD...: run CMD every 0.1 s until it succeeds, at most
# TENTHS times; fail if it never did.
_poll() {
	local t=$1

	shift
	while [ "$t" -gt 0 ]; do
		"$@" && return 0
		nap 0.1
		t=$((t - 1))
	done
	return 1
}

# _tcp_listens PORT: a TCP socket listens on PORT. Read from /proc by the
# shell itself: ss and grep would cost two processes on each poll.
_tcp_listens() {
	local f port laddr st

	printf -v port ':%04X' "$1"
	for f in /proc/net/tcp /proc/net/tcp6; do
		# sl local_address rem_address st ...; st 0A is LISTEN.
		while read -r _ laddr _ st _; do
			[[ $laddr == *"$port" && $st == 0A ]] && return 0
		done <"$f"
	done
	return 1
}

_cm_listens() {
	rdma res show cm_id | grep -q "state LISTEN .*src-addr [^ ]*:$1 "
}

_mckey_in() {
	grep -q "joined dgid" "$_out/$1.log" &&
		ip maddr show dev eth0 | grep -qw "$2"
}

# wait_listen PORT [TIMEOUT]: wait until something listens on TCP PORT.
wait_listen() {
	_poll $((${2:-30} * 10)) _tcp_listens "$1" && return 0
	echo "nothing listens on TCP port $1"
	return 1
}

# mckey_joined NAME GROUP: wait until mckey, run as background command NAME,
# has joined multicast GROUP: librdmacm reports the join once it attached
# the QP, and eth0 is in the IP group.
mckey_joined() {
	_poll 150 _mckey_in "$1" "$2" && return 0
	echo "mckey did not join $2:"
	cat "$_out/$1.log"
	ip maddr show dev eth0
	return 1
}

# wait_cm_listen PORT [TIMEOUT]: wait until an rdma_cm id listens on PORT
# (rping's 7174, perftest -R's 18515), which no TCP socket shows.
wait_cm_listen() {
	_poll $((${2:-30} * 10)) _cm_listens "$1" && return 0
	echo "no rdma_cm id listens on port $1; the rdma_cm ids:"
	rdma res show cm_id
	return 1
}

# make_pattern FILE MIB KEY: MIB MiB of AES-128-CTR of zeros under KEY, so
# that both guests can compute it and no two blocks are alike (the kernel
# consumer tests' payloads).
make_pattern() {
	head -c "${2}M" /dev/zero |
		openssl enc -aes-128-ctr -K "$3" -iv 0 >"$1" &&
		[ "$(stat -c %s "$1")" = $(($2 << 20)) ]
}

# --- two guests ------------------------------------------------------------

declare -A _barrier_gen

# How barrier() waits between two looks for the peer, and how many looks
# make a second. A look is one stat over 9p; the nap forks nothing, so
# the guest that waits while the other runs a client (bench/ measures its
# CPU time) spends next to none.
BARRIER_LOOKS_PER_S=20
barrier_nap() {
	nap 0.05
}

# barrier NAME: wait until the other guest reaches `barrier NAME` too. The
# same name can be used again: each use is a new generation. A no-op with
# one guest. Fails (returns 1) on timeout or when the peer has died.
barrier() {
	local name=$1 peer gen t=$((BARRIER_TIMEOUT * BARRIER_LOOKS_PER_S))
	local dir=$RESULTS/barrier

	[ "$NGUESTS" = 2 ] || return 0
	if [ "$GUEST" = a ]; then peer=b; else peer=a; fi
	gen=$((${_barrier_gen[$name]:-0} + 1))
	_barrier_gen[$name]=$gen
	[ -d "$dir" ] || mkdir -p "$dir"
	: >"$dir/$name.$gen.$GUEST"
	while [ ! -e "$dir/$name.$gen.$peer" ]; do
		if [ -e "$RESULTS/$peer/status" ] || [ -e "$RESULTS/$peer/dead" ]; then
			echo "barrier $name: guest $peer finished without reaching it"
			return 1
		fi
		if [ "$t" -le 0 ]; then
			echo "barrier $name: guest $peer did not arrive in ${BARRIER_TIMEOUT}s"
			return 1
		fi
		barrier_nap
		t=$((t - 1))
	done
}

# --- the driver ------------------------------------------------------------

_modprobe_conf=/etc/modprobe.d/rxe-testbed.conf

# load_rxe [ours|theirs]: load the driver under test (default $RXE_IMPL).
#   ours:   its dependencies with modprobe, then insmod $RXE_KO with the
#           module parameters in $RXE_PARAMS (words, e.g. "icrc=crypto").
#           The in-tree module is blocked from loading (`rdma link add` may
#           ask for it).
#   theirs: the kernel's in-tree rdma_rxe with modprobe.
# Also loads ib_uverbs and rdma_ucm for userspace.
load_rxe() {
	local impl=${1:-$RXE_IMPL} deps=()

	modprobe -a ib_core ib_uverbs rdma_cm rdma_ucm || return 1
	case $impl in
	ours)
		[ -e "$RXE_KO" ] || { echo "$RXE_KO does not exist (build failed?)"; return 1; }
		echo "install rdma_rxe /bin/false" >"$_modprobe_conf"
		IFS=, read -r -a deps <<<"$(modinfo -F depends "$RXE_KO")"
		[ "${#deps[@]}" = 0 ] || modprobe -a "${deps[@]}" || return 1
		# shellcheck disable=SC2086 # words: one parameter each
		insmod "$RXE_KO" ${RXE_PARAMS:-} || return 1
		;;
	theirs)
		rm -f "$_modprobe_conf"
		modprobe rdma_rxe || return 1
		;;
	*)
		echo "load_rxe: unknown implementation '$impl' (ours or theirs)"
		return 1
		;;
	esac
	echo "loaded rdma_rxe ($impl): $(modinfo_loaded)"
}

# load_rxe_intree: insmod the kernel's in-tree rdma_rxe by its path, even
# where modprobe is told not to load it (interop tests).
load_rxe_intree() {
	local ko

	modprobe -a ib_core ib_uverbs rdma_cm rdma_ucm ip6_udp_tunnel udp_tunnel || return 1
	ko=$(find "/lib/modules/$(uname -r)/kernel/drivers/infiniband/sw/rxe" -name 'rdma_rxe.ko*' | head -n 1)
	[ -n "$ko" ] || { echo "no in-tree rdma_rxe.ko"; return 1; }
	insmod "$ko"
}

# kernel_has_mpe: does the guest's kernel have the verbs of the Memory
# Placement Extensions, RDMA FLUSH and ATOMIC WRITE (6.2 on)?
kernel_has_mpe() {
	[ "$(printf '%s\n' 6.2 "$(uname -r)" | sort -V | head -n 1)" = 6.2 ]
}

# Which rdma_rxe is loaded: ours is out-of-tree (taint flag O).
modinfo_loaded() {
	local taint v

	[ -d /sys/module/rdma_rxe ] || { echo "not loaded"; return 1; }
	read -r taint 2>/dev/null </sys/module/rdma_rxe/taint || taint=
	read -r v 2>/dev/null </sys/module/rdma_rxe/version || v=
	if [[ $taint == *O* ]]; then
		echo "out-of-tree${v:+, version $v}"
	else
		echo "in-tree${v:+, version $v}"
	fi
}

# unload_rxe: delete every rxe link and remove the module.
unload_rxe() {
	local dev

	for dev in $(rdma link show 2>/dev/null | awk '/ netdev / { split($2, a, "/"); print a[1] }'); do
		rdma link delete "$dev" || return 1
	done
	rmmod rdma_rxe
}

# rxe_add [NAME] [NETDEV]: `rdma link add NAME type rxe netdev NETDEV` and
# rxe_wait_ready NAME.
rxe_add() {
	local name=${1:-rxe0} netdev=${2:-eth0}

	rdma link add "$name" type rxe netdev "$netdev" || return 1
	rxe_wait_ready "$name"
}

# rxe_wait_ready [NAME]: wait up to 10 s until the port of NAME is ACTIVE
# and its GID table holds the GID of $MY_IP (added asynchronously).
rxe_wait_ready() {
	local name=${1:-rxe0} t=100

	while [ "$t" -gt 0 ]; do
		if grep -q ACTIVE "/sys/class/infiniband/$name/ports/1/state" 2>/dev/null &&
			[ -n "$(gid_index "$MY_IP" "$name")" ]; then
			return 0
		fi
		nap 0.1
		t=$((t - 1))
	done
	echo "$name: port not ACTIVE or no GID for $MY_IP after 10 s"
	rdma link show
	show_gids "$name"
	return 1
}

rxe_del() {
	rdma link delete "${1:-rxe0}"
}

# rxe_teardown [DEV]: the end of a test of one device (default rxe0), as
# checks: no object left on it but the PD, CQ and QP 1 of ib_core's MAD
# agent, the device deleted, the module unloaded, no object left behind
# by the driver's audit, and a clean kernel log.
rxe_teardown() {
	local dev=${1:-rxe0}

	check_match "no QP, MR, CQ or PD left on $dev" \
		"$dev: pd 1 cq 1 qp 1 cm_id 0 mr 0 ctx 0 srq 0" rdma resource show
	check "rdma link delete $dev" rxe_del "$dev"
	check "rmmod rdma_rxe" rmmod rdma_rxe
	expect_fail "no objects leaked (the driver's audit at delete and unload)" \
		sh -c "dmesg | grep -E 'objects leaked|groups leaked|still counted|still waiting for'"
	dmesg_clean
}

# gid_index IP [DEV]: print the GID index of IPv4 or IPv6 address IP.
gid_index() {
	local ip=$1 dev=${2:-rxe0} want f gid o1 o2 o3 o4

	if [[ $ip == *:* ]]; then
		want=$(python3 -c 'import ipaddress, sys; print(ipaddress.ip_address(sys.argv[1]).exploded)' "$ip")
	else
		IFS=. read -r o1 o2 o3 o4 <<<"$ip"
		want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$o1" "$o2" "$o3" "$o4")
	fi
	# The table has hundreds of entries: no fork per entry.
	for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
		read -r gid 2>/dev/null <"$f" || continue
		[ "$gid" = "$want" ] && { echo "${f##*/}"; return 0; }
	done
	return 0
}

# show_gids [DEV]: the non-zero GID table entries with their types and netdevs.
show_gids() {
	local dev=${1:-rxe0} f i gid type ndev port=/sys/class/infiniband/${1:-rxe0}/ports/1

	for f in "$port"/gids/*; do
		i=${f##*/}
		read -r gid 2>/dev/null <"$f" || continue
		[ "$gid" = 0000:0000:0000:0000:0000:0000:0000:0000 ] && continue
		read -r type 2>/dev/null <"$port/gid_attrs/types/$i" || type='?'
		read -r ndev 2>/dev/null <"$port/gid_attrs/ndevs/$i" || ndev='?'
		printf '%s %-40s %-10s %s\n' "$i" "$gid" "$type" "$ndev"
	done
}

# peer_mac: the other guest's MAC on eth0, from the neighbour table (a ping
# first makes sure it is there); fails when the peer does not answer within
# 10 s.
peer_mac() {
	ping -c 1 -w 10 "$PEER_IP" >/dev/null || return 1
	ip neigh show "$PEER_IP" dev eth0 |
		awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }'
}

# --- a lossy wire ------------------------------------------------------------

# wire_netem [NETEM ARGS...]: netem (loss, delay, ...) on the packets eth0
# receives, one by one as they come off the wire: an ingress redirect to
# ifb0 with netem as its root. No ARGS: take it away. netem on eth0's own
# egress would see a batch of our packets (one GSO skb, rxe_net_send()) as
# one packet and drop or delay it whole; here every packet takes its
# chance, with either driver.
wire_netem() {
	tc qdisc del dev eth0 ingress 2>/dev/null
	if [ $# = 0 ]; then
		tc qdisc del dev ifb0 root 2>/dev/null
		return 0
	fi
	modprobe ifb numifbs=1 && modprobe sch_netem && modprobe act_mirred &&
		modprobe cls_matchall && ip link set ifb0 up || return 1
	tc qdisc add dev eth0 handle ffff: ingress &&
		tc filter add dev eth0 parent ffff: matchall \
			action mirred egress redirect dev ifb0 &&
		tc qdisc replace dev ifb0 root netem "$@"
}

# wire_drop [P]: drop P percent (0.0001 steps) of the packets eth0
# receives, each at random, in the netdev ingress hook (nftables numgen
# random). The same Bernoulli loss as netem's, without its price: no
# redirect, no queue, no ifb tasklet running every packet through the
# stack a second time, which in these one-vCPU guests costs a quarter of
# a WRITE stream's throughput before anything is lost. P 100: a dead link.
# No P: take it away.
wire_drop() {
	local n pick=()

	# What the rule dropped goes to the caller's log as it goes.
	nft list table netdev rxe_drop 2>/dev/null | grep -o 'counter.*'
	nft delete table netdev rxe_drop 2>/dev/null
	[ $# = 0 ] && return 0
	n=$(awk -v p="$1" 'BEGIN { if (p !~ /^[0-9]+(\.[0-9]+)?$/ || p > 100) exit 1;
		printf "%d", p * 10000 + 0.5 }') || return 1
	# numgen's range ends below 1000000: all of it takes no pick.
	[ "$n" -ge 1000000 ] || pick=(numgen random mod 1000000 lt "$n")
	nft add table netdev rxe_drop &&
		nft add chain netdev rxe_drop in \
			"{ type filter hook ingress device eth0 priority 0; }" &&
		nft add rule netdev rxe_drop in "${pick[@]}" counter drop
}

# --- kernel log --------------------------------------------------------------

DMESG_BAD='WARNING|BUG|Oops|KASAN|UBSAN|lockdep|general protection|refcount_t|list_del corruption|list_add corruption|Call Trace|blocked for more than|rcu_.*detected stall|possible circular locking|kernel BUG|objects leaked|still counted as sending|still counted as held'

# dmesg_mark: start a new section of the kernel log for dmesg_clean.
dmesg_mark() {
	echo "rxe-testbed: dmesg mark $*" >/dev/kmsg
}

# dmesg_clean [what]: a check that the kernel log since the test started
# (or the last dmesg_mark) has no warning, BUG, oops or lockdep splat.
_dmesg_bad_lines() {
	dmesg | awk '/rxe-testbed: (guest .* running|dmesg mark)/ { n = 0; delete l; next } { l[n++] = $0 } END { for (i = 0; i < n; i++) print l[i] }' |
		grep -E -- "$DMESG_BAD" | head -n 60
}

_dmesg_clean() {
	local bad

	bad=$(_dmesg_bad_lines) || true
	[ -z "$bad" ] && return 0
	echo "$bad"
	return 1
}

# shellcheck disable=SC2120 # tests pass their own description
dmesg_clean() {
	check "${1:-kernel log is clean (no WARNING, BUG, Oops, lockdep, ...)}" _dmesg_clean
}
