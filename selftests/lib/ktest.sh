# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the tests that run selftests/ktest/rxe_ktest.ko, sourced
# after lib/guest.sh:
#
#   ktest_run ARGS...      load rxe_ktest with ARGS (role=, addr=, count=,
#                          size=, ops=, poll=...), wait until it finishes,
#                          print its report, unload it; succeed when it
#                          passed. Usable in check / check_match.
#   ktest_start ARGS...    load it and return (a server, say)
#   ktest_finish           wait for the module started with ktest_start to
#                          finish, print its report, unload it; succeed
#                          when it passed
#   ktest_detects ARGS...  run it with corrupt= (a damaged payload) and
#                          succeed only if it FAILED, naming the bad byte
#   ktest_finish_fails RE  like ktest_finish, but it must FAIL with a
#                          report line matching RE, and still unload
#   ktest_wait_report RE   wait until the report has a line matching RE
#   ktest_pair SERVER TAG 4|6 WHAT ARGS...
#                          two guests: guest SERVER serves on its own
#                          IPv4 (4) or IPv6 (6) address, the other runs a
#                          client to it with ARGS; both must pass. TAG
#                          names the barriers; WHAT says what the
#                          client's run proves.
#
# The module reports in /sys/kernel/debug/rxe_ktest/{state,result}. Every
# wait in the module is bounded by its timeout_ms (default 20 s per step)
# and listen_ms (a server's wait for a client, default 120 s); the wait
# here is bounded by KTEST_WAIT seconds.

KTEST_KO=${RXE_KTEST_KO:-$REPO/selftests/ktest/rxe_ktest.ko}
KTEST_DBG=/sys/kernel/debug/rxe_ktest
KTEST_WAIT=${KTEST_WAIT:-150}

ktest_start() {
	[ -e "$KTEST_KO" ] || { echo "$KTEST_KO does not exist (make ktest)"; return 1; }
	echo "insmod rxe_ktest.ko $*"
	insmod "$KTEST_KO" "$@"
}

# Wait for the verdict, print the report, unload. Returns 0 on pass.
ktest_finish() {
	local state=running t=$((KTEST_WAIT * 10)) rc=0

	while [ "$t" -gt 0 ]; do
		read -r state <"$KTEST_DBG/state" || state=missing
		[ "$state" = running ] || break
		nap 0.1
		t=$((t - 1))
	done
	cat "$KTEST_DBG/result"
	echo "ktest state: $state"
	[ "$state" = pass ] || rc=1
	if ! rmmod rxe_ktest; then
		echo "rmmod rxe_ktest failed"
		rc=1
	fi
	return "$rc"
}

ktest_run() {
	ktest_start "$@" || return 1
	ktest_finish
}

# ktest_wait_report REGEX: wait until the running module's report has a
# line matching REGEX (a server seeing its client connect, say).
ktest_wait_report() {
	local t=$((KTEST_WAIT * 10))

	while [ "$t" -gt 0 ]; do
		grep -qE -- "$1" "$KTEST_DBG/result" 2>/dev/null && return 0
		nap 0.1
		t=$((t - 1))
	done
	echo "no line matching /$1/ in the report after ${KTEST_WAIT}s:"
	cat "$KTEST_DBG/result" 2>/dev/null
	return 1
}

# ktest_finish_fails REGEX: the module started with ktest_start must end
# in failure, with a report line matching REGEX, and unload after it.
ktest_finish_fails() {
	local out rc=0

	out=$(ktest_finish) || rc=$?
	echo "$out"
	if [ "$rc" = 0 ]; then
		echo "rxe_ktest passed where it had to fail"
		return 1
	fi
	if ! grep -qE -- "$1" <<<"$out"; then
		echo "rxe_ktest failed, but no report line matches /$1/"
		return 1
	fi
	if [ -d /sys/module/rxe_ktest ]; then
		echo "rxe_ktest is still loaded after its failure"
		return 1
	fi
	return 0
}

# The test must be able to fail: a damaged byte has to be reported as
# "FAIL ... byte N is 0x.., want 0x..", and the module must still unload.
ktest_detects() {
	ktest_start "$@" || return 1
	ktest_finish_fails "^ktest: FAIL .*byte [0-9]+ is 0x[0-9a-f]{2}, want 0x[0-9a-f]{2}"
}

ktest_pair() {
	local server=$1 tag=$2 kind=$3 what=$4 mine=$MY_IP peer=$PEER_IP

	shift 4
	if [ "$kind" = 6 ]; then
		mine=$MY_IP6
		peer=$PEER_IP6
	fi
	if [ "$GUEST" = "$server" ]; then
		check "ktest server listens on $mine" ktest_start role=server addr="$mine"
		check "barrier: ktest server ready" barrier "$tag"
		check_match "ktest server on $mine: every session verified and ended as expected" \
			"^ktest: result: PASS" ktest_finish
	else
		check "barrier: ktest server ready" barrier "$tag"
		check_match "ktest client to $peer: $what" "^ktest: result: PASS" \
			ktest_run role=client addr="$peer" "$@"
	fi
	check "barrier: $tag run done" barrier "$tag-done"
}
