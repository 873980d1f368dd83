# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Running RDMA tools as server and client, on one guest (loopback over the
# guest's own IP) or on two (server on $SERVER, default guest a, client on
# the other). Sourced after guest.sh.
#
#   pair WHAT REGEX [--cm] CMD ARGS...
#       the server runs CMD ARGS, the client CMD ARGS <server IP>; both must
#       succeed and print a line matching REGEX. --cm: the tool rendezvous
#       over rdma_cm, not TCP port 18515, so the client waits a moment.
#   SERVER=b pair ...      the same with the roles swapped
#   SERVER_IP6=1 pair ...  the client uses the server's IPv6 address
#
# Result lines of the tools, for REGEX:
BW_ROW='^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+'
LAT_ROW='^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+'
PP_ROW='[0-9]+ iters in [0-9.]+ seconds'

_pairn=0

# Tools are started with `timeout`, so they must be programs, not shell
# functions: perftest runs through $REPO/selftests/bin/rxe-perftest.
PATH=$REPO/selftests/bin:$PATH

_server_ip() {
	local peer=$1

	if [ "${SERVER_IP6:-0}" = 1 ]; then
		if [ "$peer" = 1 ]; then echo "$PEER_IP6"; else echo "$MY_IP6"; fi
	else
		if [ "$peer" = 1 ]; then echo "$PEER_IP"; else echo "$MY_IP"; fi
	fi
}

pair() {
	local what=$1 re=$2 cm=0 server=${SERVER:-a} ip

	shift 2
	if [ "$1" = --cm ]; then
		cm=1
		shift
	fi
	_pairn=$((_pairn + 1))

	if [ "$NGUESTS" = 1 ]; then
		ip=$(_server_ip 0)
		bg "srv$_pairn" "$@"
		if [ "$cm" = 0 ]; then wait_listen 18515 >/dev/null || true; else sleep 2; fi
		check_match "$what (client)" "$re" "$@" "$ip"
		check_match "$what (server)" "$re" bg_wait "srv$_pairn"
		return 0
	fi

	if ! barrier "pair$_pairn-start"; then
		fail "$what: the other guest did not come"
		return 0
	fi
	if [ "$GUEST" = "$server" ]; then
		bg "srv$_pairn" "$@"
		if [ "$cm" = 0 ]; then wait_listen 18515 >/dev/null || true; else sleep 2; fi
		barrier "pair$_pairn-listen" || true
		check_match "$what (server)" "$re" bg_wait "srv$_pairn"
	else
		barrier "pair$_pairn-listen" || true
		check_match "$what (client)" "$re" "$@" "$(_server_ip 1)"
	fi
	barrier "pair$_pairn-done" || true
}

# counter NAME [DEV]: one hw counter of port 1.
counter() {
	rdma statistic show link "${2:-rxe0}/1" |
		tr ' ' '\n' | awk -v n="$1" 'f { print; exit } $0 == n { f = 1 }'
}

# counters [DEV]: all of them, for the log.
counters() {
	rdma statistic show link "${1:-rxe0}/1"
}
