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
#       over rdma_cm, not TCP port 18515: the client waits for its listen.
#   SERVER=b pair ...      the same with the roles swapped
#   SERVER_IP6=1 pair ...  the client uses the server's IPv6 address
#   SERVER_RE=RE pair ...  the server's output must match RE instead (empty:
#                          the server only has to succeed)
#   $LINGER                lib/rxe-linger.c, which the host built, for
#                          RC ping-pongs on a lossy link: pair ... env
#                          LD_PRELOAD="$LINGER" ibv_rc_pingpong ...
#
# Result lines of the tools, for REGEX:
BW_ROW='^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+'
# A latency row whose clock calibration failed under emulation reads "inf"
# for every time: the iterations still all completed.
LAT_ROW='^ *[0-9]+ +[0-9]+ +([0-9.]+|inf) +([0-9.]+|inf) +([0-9.]+|inf)'
PP_ROW='[0-9]+ iters in [0-9.]+ seconds'
# A UD row of 1 KiB messages that counted at least one.
UD_ROW='^ *1024 +[1-9][0-9]* +[0-9.]+ +[0-9.]+'

_pairn=0

# ibv_rc_pingpong has no end handshake: on a lossy link the side done
# first may destroy its QP while the peer still retries a last SEND whose
# ACK was lost. The shim keeps each QP a second longer (lib/rxe-linger.c).
# shellcheck disable=SC2034 # for the tests that source this file
LINGER=${RXE_TOOLS:-}/rxe-linger.so

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

# The server's check: its output must match REGEX too, unless SERVER_RE
# says otherwise (empty: it only has to succeed; ib_read_lat's server
# prints no result).
_server_check() {
	local what=$1 re=$2

	shift 2
	re=${SERVER_RE-$re}
	if [ -z "$re" ]; then
		check "$what" "$@"
	else
		check_match "$what" "$re" "$@"
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
		if [ "$cm" = 0 ]; then wait_listen 18515; else wait_cm_listen 18515; fi >/dev/null || true
		check_match "$what (client)" "$re" "$@" "$ip"
		_server_check "$what (server)" "$re" bg_wait "srv$_pairn"
		return 0
	fi

	if ! barrier "pair$_pairn-start"; then
		fail "$what: the other guest did not come"
		return 0
	fi
	if [ "$GUEST" = "$server" ]; then
		bg "srv$_pairn" "$@"
		if [ "$cm" = 0 ]; then wait_listen 18515; else wait_cm_listen 18515; fi >/dev/null || true
		barrier "pair$_pairn-listen" || true
		_server_check "$what (server)" "$re" bg_wait "srv$_pairn"
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

# retries [DEV]: every retransmission the retry timer made (early and at
# the QP's timeout).
retries() {
	echo $(( $(counter retry_early "$@") + $(counter retry_timeout "$@") ))
}

# The rping server ends on the client's disconnect request, one MAD.
# Under loss that MAD may be lost, and ib_cm does not send it again once
# the client has destroyed its id, so the server then waits for good.
# With RPING_LOSSY set, a server stopped by its (shorter) timeout after it
# printed its last ping counts as done; the check still wants that ping.
_rping_server_wait() {
	local rc=0

	bg_wait "$1" || rc=$?
	if [ "$rc" = 124 ] && [ -n "${RPING_LOSSY:-}" ]; then
		echo "(stopped while waiting for the client's disconnect request, lost on the wire)"
		return 0
	fi
	return "$rc"
}

# rping_pair WHAT [ADDR_KIND] [ARGS...]: rping server on $SERVER (default
# a), client on the other guest (or both on one guest), over rdma_cm to
# the server's IPv4 address (ADDR_KIND 6: IPv6). The client must print
# every round and both must succeed.
rping_pair() {
	local what=$1 six=${2:-4} server=${SERVER:-a} ip count=20
	local tmo=$CHECK_TIMEOUT

	shift 2 || shift $#
	_pairn=$((_pairn + 1))
	if [ "$six" = 6 ]; then
		ip=$MY_IP6
		[ "$GUEST" = "$server" ] || ip=$PEER_IP6
	else
		ip=$MY_IP
		[ "$GUEST" = "$server" ] || ip=$PEER_IP
	fi
	if [ "$NGUESTS" = 1 ]; then
		bg "rping$_pairn" rping -s -a "$ip" -v -C "$count" "$@"
		wait_cm_listen 7174 >/dev/null || true
		check_match "$what (client)" "rdma-ping-$((count - 1)):" rping -c -a "$ip" -v -C "$count" "$@"
		check_match "$what (server)" "rdma-ping-$((count - 1)):" bg_wait "rping$_pairn"
		return 0
	fi
	barrier "pair$_pairn-start" || { fail "$what: the other guest did not come"; return 0; }
	if [ "$GUEST" = "$server" ]; then
		[ -z "${RPING_LOSSY:-}" ] || tmo=40
		CHECK_TIMEOUT=$tmo bg "rping$_pairn" rping -s -a "$ip" -v -C "$count" "$@"
		wait_cm_listen 7174 >/dev/null || true
		barrier "pair$_pairn-listen" || true
		check_match "$what (server)" "rdma-ping-$((count - 1)):" _rping_server_wait "rping$_pairn"
	else
		barrier "pair$_pairn-listen" || true
		check_match "$what (client)" "rdma-ping-$((count - 1)):" rping -c -a "$ip" -v -C "$count" "$@"
	fi
	barrier "pair$_pairn-done" || true
}

# mcast_counts: where this guest's multicast datagrams went, by layer: what
# eth0 received and sent (all frames: virtio-net counts no multicast
# apart), what IP took in and sent as multicast, what UDP delivered or
# found no socket for.
mcast_counts() {
	local s=/sys/class/net/eth0/statistics

	echo "eth0 rx_packets $(cat $s/rx_packets)" \
		"rx_dropped $(cat $s/rx_dropped) tx_packets $(cat $s/tx_packets);" \
		"$(nstat -asz IpExtInMcastPkts IpExtOutMcastPkts IpInDiscards \
			UdpInDatagrams UdpNoPorts UdpInErrors |
			awk '$1 !~ /^#/ { printf "%s %s ", $1, $2 }')"
}

# mckey_pair WHAT GROUP: rdma_cm multicast over IPv4 (rdma_cm joins no
# IPv6 group on RoCEv2): mckey on $SERVER (default a) joins GROUP and must
# receive the 20 datagrams mckey on the other guest sends to it. The
# receiver's eth0 takes all multicast frames meanwhile: 6.12's virtio-net
# programs its multicast filter from a work item, after the join has
# returned, and a sender that starts at once lost all 20 datagrams once.
# The IP layer still delivers only what the joined group is sent.
# Both guests log mcast_counts before and after into checks.log, and a
# failed receiver shows them, to say at which layer datagrams vanished.
mckey_pair() {
	local what=$1 group=$2 server=${SERVER:-a}

	_pairn=$((_pairn + 1))
	barrier "pair$_pairn-start" || { fail "$what: the other guest did not come"; return 0; }
	_mcast_before=$(mcast_counts)
	checks_log "mcast counts before mckey: $_mcast_before"
	if [ "$GUEST" = "$server" ]; then
		ip link set eth0 allmulticast on
		bg "mckey$_pairn" mckey -m "$group" -b "$MY_IP" -C 20
		check "$what: $server joined $group" mckey_joined "mckey$_pairn" "$group"
		barrier "pair$_pairn-listen" || true
		check_match "$what (receiver)" "data transfers complete" bg_wait "mckey$_pairn"
		ip link set eth0 allmulticast off
	else
		barrier "pair$_pairn-listen" || true
		check_match "$what (sender)" "data transfers complete" \
			mckey -m "$group" -b "$MY_IP" -s -C 20
	fi
	checks_log "mcast counts after mckey:  $(mcast_counts)"
	_mcast_before=
	barrier "pair$_pairn-done" || true
}

# stacked_rxe_up DEV: for a test whose addresses V4_MY, V6_MY (this
# guest's) and V4_PEER, V6_PEER live on DEV, a netdev stacked above eth0
# (a VLAN, a bridge) or eth0 itself: they become MY_IP, MY_IP6, PEER_IP and PEER_IP6, rxe0
# is added on eth0, both guests ping each other over them, and the GIDs
# of this guest's, $g4 and $g6 after the call, must be attached to DEV.
stacked_rxe_up() {
	local dev=$1

	MY_IP=$V4_MY
	PEER_IP=$V4_PEER
	MY_IP6=$V6_MY
	PEER_IP6=$V6_PEER
	check "add rxe0 on eth0" rxe_add rxe0 eth0
	check "barrier: rxe0 is up on both guests" barrier up
	check "ping $PEER_IP" ping -c 2 -i 0.2 -w 20 "$PEER_IP"
	check "ping $PEER_IP6" ping -c 2 -i 0.2 -w 20 "$PEER_IP6"
	g4=$(gid_index "$V4_MY")
	g6=$(gid_index "$V6_MY")
	check "GIDs of $V4_MY ($g4) and $V6_MY ($g6)" test -n "$g4" -a -n "$g6"
	check "GID $g4 belongs to $dev" \
		grep -qx "$dev" "/sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/$g4"
}

# traffic_list: the issue's list of applications, each as a server/client
# pair (see pair): the verbs pingpongs with their buffers validated, every
# perftest family, rdma_cm (perftest -R and rping) over IPv4 and IPv6, and
# between two guests rdma_cm multicast (mckey). Two knobs leave out what
# another run shows already:
#   TRAFFIC_BRIEF=1    one case of each path: the RC ping-pong (its data
#                      checked), RC WRITE, READ and atomics, UC, UD,
#                      SEND over the IPv6 GID, rdma_cm over both families,
#                      multicast; not the other ping-pongs, the SEND of
#                      every size from 2 B to 8 MiB nor the latency tools.
#                      For a run on another kernel, where each case costs
#                      its ~5 s of start-up again, and for ours with ours
#                      (21), where 22 (the whole list) and 23 (its swapped
#                      part) run them with ours in each role against the
#                      in-tree driver.
#   TRAFFIC_SWAPPED=1  the list with the two drivers the other way round
#                      from a run before (23 after 22): not the tools whose
#                      two sides do the same work (the ping-pongs, write and
#                      send latency), nor the size sweep, whose sending side
#                      the first run judged and whose receiving side ours
#                      shows with ours sending (20, 26).
traffic_list() {
	local g6 full=1 first=1

	[ "${TRAFFIC_BRIEF:-0}" != 1 ] || full=0
	[ "${TRAFFIC_SWAPPED:-0}" != 1 ] || first=0
	g6=$(gid_index "$MY_IP6")
	[ "$first" != 1 ] ||
		pair "ibv_rc_pingpong -c" "$PP_ROW" ibv_rc_pingpong -d rxe0 -g 1 -c -n 200
	if [ "$first$full" = 11 ]; then
		pair "ibv_uc_pingpong -c" "$PP_ROW" ibv_uc_pingpong -d rxe0 -g 1 -c -n 200
		pair "ibv_ud_pingpong -c" "$PP_ROW" ibv_ud_pingpong -d rxe0 -g 1 -c -n 200 -s 1024
		pair "ibv_srq_pingpong -c" "$PP_ROW" ibv_srq_pingpong -d rxe0 -g 1 -c -n 200
	fi
	pair "ib_write_bw 64 KiB" "$BW_ROW" rxe-perftest ib_write_bw -d rxe0 -x 1 -n 300 -F
	pair "ib_read_bw 64 KiB" "$BW_ROW" rxe-perftest ib_read_bw -d rxe0 -x 1 -n 300 -F
	[ "$first$full" != 11 ] ||
		pair "ib_send_bw 2 B to 8 MiB" "^ *8388608 +[0-9]+" rxe-perftest ib_send_bw -d rxe0 -x 1 -a -n 5 -F
	pair "ib_atomic_bw" "$BW_ROW" rxe-perftest ib_atomic_bw -d rxe0 -x 1 -n 300 -F
	pair "ib_write_bw -c UC" "$BW_ROW" rxe-perftest ib_write_bw -d rxe0 -x 1 -n 300 -c UC -F
	# UD has no retry: one datagram the wire drops (a slow guest overruns
	# the host's socket between the QEMUs) would leave a server counting
	# to -n forever, so both sides send and count for 2 seconds instead.
	pair "ib_send_bw -c UD" "$UD_ROW" rxe-perftest ib_send_bw -d rxe0 -x 1 -D 2 -c UD -s 1024 -F
	pair "ib_write_bw -R (rdma_cm)" "$BW_ROW" --cm rxe-perftest ib_write_bw -d rxe0 -R -n 300 -F
	if [ "$full" = 1 ]; then
		[ "$first" != 1 ] ||
			pair "ib_write_lat" "$LAT_ROW" rxe-perftest ib_write_lat -d rxe0 -x 1 -n 300 -F
		SERVER_RE='' pair "ib_read_lat" "$LAT_ROW" rxe-perftest ib_read_lat -d rxe0 -x 1 -n 300 -F
		[ "$first" != 1 ] ||
			pair "ib_send_lat" "$LAT_ROW" rxe-perftest ib_send_lat -d rxe0 -x 1 -n 300 -F
	fi
	pair "ib_send_bw over the IPv6 GID ($g6)" "$BW_ROW" rxe-perftest ib_send_bw -d rxe0 -x "$g6" -n 300 -F
	rping_pair "rping -v, 20 rounds" 4
	rping_pair "rping -v over IPv6, 20 rounds" 6
	[ "$NGUESTS" = 1 ] ||
		mckey_pair "mckey: 20 datagrams to multicast group 239.1.2.5" 239.1.2.5
}
