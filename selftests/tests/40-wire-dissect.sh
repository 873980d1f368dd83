#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What we put on the wire, judged by Wireshark and by our own parser.
# Guest a runs a pyverbs traffic mix that makes every opcode family a
# RoCEv2 device sends (RC SEND/WRITE/READ/atomic with every first, middle,
# last, only, immediate and invalidate variant, ACK, RNR NAK, NAK, UC,
# UD), over IPv4 and IPv6, with and without a traffic class, with PSNs
# crossing the 24-bit wrap. Guest b serves it and captures both
# directions on eth0. Then, on the host (host_check), tshark must
# dissect every frame as InfiniBand
# with no Malformed or Error mark, and the headers must say what the work
# requests asked for: UDP port 4791, DF, one UDP source port per QP and
# different ones between QPs, the traffic class of the address vector,
# RETH/ImmDt/IETH/AtomicETH/AtomicAckETH/DETH contents
# (selftests/py/wire_mix.py).
#
# guests: 2
# timeout: 420

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/wire.sh
. "$REPO/selftests/lib/wire.sh"

mix=$REPO/selftests/py/wire_mix.py
cap=/tmp/wire.pcap

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "barrier: rxe0 is up on both" barrier rxe-up
check "ping $PEER_IP" ping -c 2 -i 0.2 -w 20 "$PEER_IP"
check "ping $PEER_IP6" ping -c 2 -i 0.2 -w 20 "$PEER_IP6"

if [ "$GUEST" = b ]; then
	capture_start "$cap"
	check "barrier: capture running" barrier capture
	check "server side of the traffic mix" \
		python3 "$mix" server "$PEER_IP" "$PEER_IP6" "$MY_IP" "$MY_IP6" /tmp/plan.json
	check "barrier: traffic done" barrier traffic
	capture_stop "$cap"
	check "the plan of the mix is kept" cp /tmp/plan.json "$RESULTS/$GUEST/"
	host_check "dissect the capture: tshark -T pdml" \
		sh -c "tshark -r ${cap##*/} ${TSHARK_OPTS[*]} -T pdml >wire.pdml"
	host_check "the capture against Wireshark and roce.py" \
		/usr/bin/python3 "$mix" analyze plan.json "${cap##*/}" wire.pdml "$RXE_IMPL"
else
	check "barrier: capture running" barrier capture
	check "client side of the traffic mix" \
		python3 "$mix" client "$PEER_IP" "$PEER_IP6" "$MY_IP" "$MY_IP6"
	check "barrier: traffic done" barrier traffic
fi
dmesg_clean
finish
