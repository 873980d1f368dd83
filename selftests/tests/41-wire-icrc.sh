#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The ICRC of every packet both guests send, checked by an implementation
# that is not the driver's: tshark does not check it. Guest b captures
# both directions while perftest (RC SEND/WRITE/READ/atomic, UC, UD, IPv4
# and IPv6, traffic classes, sizes that need every pad count) and the
# pyverbs mix of 40-wire-dissect (every opcode, flow labels) run between
# the guests. On the host (host_check), selftests/py/icrc_check.py then
# recomputes each ICRC per
# the RoCEv2 annex A17.3.3 (roce.py), has scapy recompute the IPv4 ones,
# and first proves on real packets that it notices any covered byte
# changing and ignores the fields routers rewrite. On the receive side
# no packet of ours may be dropped for its ICRC (drop_icrc_err stays 0).
# With our driver, guest b sums with the crypto API's CRC-32 (icrc=crypto)
# and guest a with the engine its load-time timing chose (icrc=auto), so
# each engine's ICRCs are checked on the wire and by the other.
#
# guests: 2
# timeout: 480

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/traffic.sh
. "$REPO/selftests/lib/traffic.sh"
# shellcheck source=selftests/lib/wire.sh
. "$REPO/selftests/lib/wire.sh"

mix=$REPO/selftests/py/wire_mix.py
cap=/tmp/icrc.pcap

# insmod with an engine that does not exist, its dependencies loaded so
# that only the parameter can be what it refuses: it must say so.
# shellcheck disable=SC2317 # called through check_match
bogus_engine() {
	local deps

	deps=$(modinfo -F depends "$RXE_KO" | tr , ' ')
	# shellcheck disable=SC2086 # one module per word
	modprobe -a ib_core $deps || return 1
	if insmod "$RXE_KO" icrc=bogus; then
		echo "insmod took icrc=bogus"
		return 1
	fi
	dmesg | tail -n 5
}

if [ "$RXE_IMPL" = ours ]; then
	check_match "icrc=bogus is refused at load" "bogus' invalid for parameter .icrc" \
		bogus_engine
	check "a refused load leaves no module behind" \
		bash -c '! grep -q "^rdma_rxe " /proc/modules'
	[ "$GUEST" = b ] && RXE_PARAMS=icrc=crypto || RXE_PARAMS=icrc=auto
	export RXE_PARAMS
fi
check "load rdma_rxe ($RXE_IMPL${RXE_PARAMS:+, $RXE_PARAMS})" load_rxe
if [ "$RXE_IMPL" = ours ]; then
	engine=$(cat /sys/module/rdma_rxe/parameters/icrc)
	info "ICRC engine: $engine; $(dmesg | grep -o 'icrc: crc32_le .*' | tail -n 1)"
	if [ "$GUEST" = b ]; then
		check "icrc=crypto sums with the crypto API ($engine)" \
			test "${engine%% *}" = crypto
	fi
fi
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "barrier: rxe0 is up on both" barrier rxe-up
check "ping $PEER_IP" ping -c 2 -i 0.2 -w 20 "$PEER_IP"
check "ping $PEER_IP6" ping -c 2 -i 0.2 -w 20 "$PEER_IP6"
g4=$(gid_index "$MY_IP")
g6=$(gid_index "$MY_IP6")
check "GIDs of $MY_IP ($g4) and $MY_IP6 ($g6)" test -n "$g4" -a -n "$g6"

[ "$GUEST" != b ] || capture_start "$cap"
check "barrier: capture running" barrier capture

# perftest: the server on guest a, the client on b. -n 20 keeps it short.
pt() {
	pair "$1" "$BW_ROW" rxe-perftest "${@:2}" -d rxe0 -n 20
}
pt "ib_send_bw RC, IPv4, 2501 B (pad 3)" ib_send_bw -x "$g4" -s 2501
b0=$(counter batched_pkts 2>/dev/null)
pt "ib_write_bw RC, IPv6, 3002 B, tclass 104" \
	ib_write_bw -x "$g6" -s 3002 --tclass=104
b6=$(($(counter batched_pkts 2>/dev/null || echo 0) - ${b0:-0}))
pt "ib_read_bw RC, IPv4, 2003 B" ib_read_bw -x "$g4" -s 2003
pt "ib_atomic_bw CMP_AND_SWAP, IPv6" \
	ib_atomic_bw -x "$g6" -A CMP_AND_SWAP
pt "ib_send_bw UC, IPv4, 1501 B" ib_send_bw -c UC -x "$g4" -s 1501
pt "ib_send_bw UD, IPv6, 1001 B, tclass 72" \
	ib_send_bw -c UD -x "$g6" -s 1001 --tclass=72
pt "ib_write_bw UC, IPv4, 778 B, tclass 32" \
	ib_write_bw -c UC -x "$g4" -s 778 --tclass=32

# The opcodes perftest does not make (immediate, invalidate, atomic ACKs
# of both kinds, RNR NAK, NAK, flow labels): the mix of 40-wire-dissect.
if [ "$GUEST" = b ]; then
	check "pyverbs mix: server" \
		python3 "$mix" server "$PEER_IP" "$PEER_IP6" "$MY_IP" "$MY_IP6" /tmp/plan.json
else
	check "pyverbs mix: client" \
		python3 "$mix" client "$PEER_IP" "$PEER_IP6" "$MY_IP" "$MY_IP6"
fi
check "barrier: traffic done" barrier traffic

if [ "$GUEST" = b ]; then
	capture_stop "$cap"
	host_check "every captured ICRC is right (roce.py and scapy)" \
		/usr/bin/python3 "$REPO/selftests/py/icrc_check.py" "${cap##*/}" 300 "$RXE_IMPL"
fi

if [ "$RXE_IMPL" = ours ]; then
	info "counters: $(counters)"
	check "packets were received (rcvd_pkts $(counter rcvd_pkts))" \
		test "$(counter rcvd_pkts)" -gt 100
	check "no packet of the peer was dropped for its ICRC (drop_icrc_err $(counter drop_icrc_err))" \
		test "$(counter drop_icrc_err)" = 0
	check "no packet of the peer was dropped as malformed (drop_malformed $(counter drop_malformed))" \
		test "$(counter drop_malformed)" = 0
	# The IPv6 WRITEs went in batches, each packet with its own UDP
	# checksum, which the receiving UDP layer checks.
	if [ "$GUEST" = b ]; then
		check "IPv6 WRITE packets went in batches ($b6 batched)" \
			test "$b6" -gt 0
	fi
	c6=$(awk '$1 == "Udp6InCsumErrors" { print $2 }' /proc/net/snmp6)
	check "no UDP/IPv6 checksum error here (Udp6InCsumErrors $c6)" \
		test "$c6" = 0
fi
check "barrier: checks done" barrier checked
dmesg_clean
finish
