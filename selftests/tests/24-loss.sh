#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A lossy link: netem drops packets that come in on both guests' eth0
# (wire_netem: each packet as it comes off the wire). RC traffic must
# still complete with its data intact and without a QP error, recovering
# through NAKs, retransmission and the ACK timer; the counters must show
# that recovery happened, with responders keeping the packets after a gap
# and requesters sending only the NAKed packet again, or asking again
# only for the READ responses missing. 1% loss for WRITE, READ, SEND and
# atomics, then 5% for WRITE and READ, then a link that reorders: a delay
# of 1 ms +- 1 ms lets packets overtake each other, which must not set
# off retry storms that run the QP out of retries.
# Last, without netem, 1 MiB READs at a 4 KiB MTU, whose responses must
# not come back in bursts that overrun the receiving guest.
#
# The ping-pongs run with lib/rxe-linger.c preloaded: ibv_rc_pingpong has
# no end handshake, and a side done first would otherwise destroy its QP
# while the peer may still be retrying a last SEND whose ACK was lost.
#
#   rxe-a: eth0 [netem loss] <--- one link ---> [netem loss] eth0 :rxe-b
#          (on what comes in)                    (on what comes in)
#
# guests: 2
# timeout: 540

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/traffic.sh
. "$REPO/selftests/lib/traffic.sh"
# shellcheck source=selftests/lib/ktest.sh
. "$REPO/selftests/lib/ktest.sh"

# loss PCT: lose PCT % of what eth0 receives.
# shellcheck disable=SC2317 # called through check
loss() {
	wire_netem loss "$1%"
}


check "the QP-linger shim (lib/rxe-linger.c) was built" have_tool rxe-linger.so
check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "modprobe sch_netem" modprobe sch_netem
check "barrier: rxe0 is up on both guests" barrier up
check "ping $PEER_IP" ping -c 2 -i 0.2 -w 20 "$PEER_IP"
check "netem loss 1% on what eth0 receives" loss 1

if [ "$RXE_IMPL" = ours ]; then
	retries0=$(( $(counter completer_retry_err) + $(counter retry_timeout) ))
	seq0=$(( $(counter send_seq_err) + $(counter rcvd_seq_err) ))
	held0=$(counter held_request)
	alone0=$(counter resent_alone)
	kept0=$(counter read_rsp_kept)
	refetch0=$(counter read_refetch)
fi
# ibv_rc_pingpong -c checks every byte that arrives.
pair "1% loss: ibv_rc_pingpong -c, 64 KiB messages" "$PP_ROW" \
	env LD_PRELOAD="$LINGER" ibv_rc_pingpong -d rxe0 -g 1 -c -s 65536 -n 100
pair "1% loss: ib_write_bw 64 KiB" "$BW_ROW" rxe-perftest ib_write_bw -d rxe0 -x 1 -n 300 -F
pair "1% loss: ib_read_bw 64 KiB" "$BW_ROW" rxe-perftest ib_read_bw -d rxe0 -x 1 -n 300 -F
# rxe_ktest on b READs from a and checks every byte: the responses kept
# past a gap must land where the ones asked for again would have.
ktest_pair a kread-loss 4 "1% loss: READs of 64 KiB and 200003 B, every byte checked" \
	ops=read count=20 size=65536,200003
pair "1% loss: ib_send_bw 64 KiB" "$BW_ROW" rxe-perftest ib_send_bw -d rxe0 -x 1 -n 300 -F
pair "1% loss: ib_atomic_bw" "$BW_ROW" rxe-perftest ib_atomic_bw -d rxe0 -x 1 -n 300 -F
RPING_LOSSY=1 rping_pair "1% loss: rping -v, 20 rounds" 4
if [ "$RXE_IMPL" = ours ]; then
	check "retransmissions happened (completer_retry_err + retry_timeout grew)" \
		sh -c "[ \$(( $(counter completer_retry_err) + $(counter retry_timeout) )) -gt $retries0 ]"
	check "sequence NAKs were sent or received" \
		sh -c "[ \$(( $(counter send_seq_err) + $(counter rcvd_seq_err) )) -gt $seq0 ]"
	check "no QP ran out of retries" test "$(counter retry_exceeded_err)" = 0
	# Both ends send (ibv_rc_pingpong and rping both ways), so each
	# responder kept packets after a gap, and each requester, once it
	# had seen that, sent a NAKed packet again alone.
	check "the responder kept packets past a gap (held_request grew)" \
		sh -c "[ $(counter held_request) -gt $held0 ]"
	check "the requester sent NAKed packets again alone (resent_alone grew)" \
		sh -c "[ $(counter resent_alone) -gt $alone0 ]"
	# b READs (ib_read_bw, rxe_ktest): after a gap in the responses it
	# kept the ones past it and asked again for the gap only.
	if [ "$GUEST" = b ]; then
		check "READ responses past a gap were kept (read_rsp_kept grew)" \
			sh -c "[ $(counter read_rsp_kept) -gt $kept0 ]"
		check "READ requests went again for the gaps only (read_refetch grew)" \
			sh -c "[ $(counter read_refetch) -gt $refetch0 ]"
	fi
fi

check "netem loss 5% on what eth0 receives" loss 5
pair "5% loss: ib_write_bw 64 KiB" "$BW_ROW" rxe-perftest ib_write_bw -d rxe0 -x 1 -n 300 -F
pair "5% loss: ib_read_bw 64 KiB" "$BW_ROW" rxe-perftest ib_read_bw -d rxe0 -x 1 -n 100 -F
if [ "$RXE_IMPL" = ours ]; then
	check "no QP ran out of retries at 5%" test "$(counter retry_exceeded_err)" = 0
	info "counters: $(counters)"
fi

check "netem: delay 1 ms +- 1 ms (reordering) and 0.5% loss on what eth0 receives" \
	wire_netem delay 1ms 1ms loss 0.5%
pair "reordering: ib_write_bw 64 KiB" "$BW_ROW" rxe-perftest ib_write_bw -d rxe0 -x 1 -n 50 -F
pair "reordering: ib_read_bw 64 KiB" "$BW_ROW" rxe-perftest ib_read_bw -d rxe0 -x 1 -n 50 -F
pair "reordering: ibv_rc_pingpong -c, 64 KiB messages" "$PP_ROW" \
	env LD_PRELOAD="$LINGER" ibv_rc_pingpong -d rxe0 -g 1 -c -s 65536 -n 20
if [ "$RXE_IMPL" = ours ]; then
	check "no QP ran out of retries with reordering" test "$(counter retry_exceeded_err)" = 0
	info "counters: $(counters)"
fi

check "netem off" wire_netem

# No netem, yet packets are lost: a 1 MiB READ asked for in one READ
# request comes back as 256 packets of 4 KiB in one burst, which overruns
# the receiving guest; asked for in window-sized READ requests it does not.
check "MTU 9000 on eth0 (RoCE MTU 4096)" ip link set eth0 mtu 9000
check "barrier: MTU 9000 on both guests" barrier mtu9000
sleep 1
[ "$RXE_IMPL" != ours ] || rcvd0=$(counter rcvd_pkts)
pair "MTU 4096: ib_read_bw 1 MiB" "$BW_ROW" rxe-perftest ib_read_bw -d rxe0 -x 1 -m 4096 -s 1048576 -n 60 -F
if [ "$RXE_IMPL" = ours ]; then
	check "no QP ran out of retries with 1 MiB READs at MTU 4096" \
		test "$(counter retry_exceeded_err)" = 0
	# 60 READs of 256 responses each: the client (b) needs 15360. The
	# receiving guest still drops some, and go-back-N sends what follows
	# a loss again (about 1.7 times over here), but one burst per READ
	# had each response sent six times over, when the READ completed.
	if [ "$GUEST" = b ]; then
		rcvd=$(( $(counter rcvd_pkts) - rcvd0 ))
		check "READ responses received: $rcvd for 15360 needed (at most 3 times)" \
			test "$rcvd" -le $(( 15360 * 3 ))
	fi
fi
check "MTU 1500 on eth0" ip link set eth0 mtu 1500
check "barrier: traffic done" barrier "done"
check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
