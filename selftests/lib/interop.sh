# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The body of the interop tests (22-interop-theirs-serves,
# 23-interop-ours-serves): each guest loads the driver RXE_IMPL_A or
# RXE_IMPL_B names for it, says which one it runs, and the two run the
# traffic list (traffic_list) against each other (on a second kernel,
# one case of each path; in 23 without what 22 shows for both ways),
# then in 22, where the
# kernel has the verb (6.2 on), RDMA ATOMIC WRITEs both ways with the
# completions and the responder's memory checked (py/mpe_peer.py), then
# a ping-pong, a WRITE stream and READs with every byte checked under 1%
# loss. Sourced by a test that has set RXE_IMPL_A or RXE_IMPL_B.

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/traffic.sh
. "$REPO/selftests/lib/traffic.sh"
# shellcheck source=selftests/lib/ktest.sh
. "$REPO/selftests/lib/ktest.sh"

if [ "$RXE_IMPL" = theirs ]; then
	check "load the in-tree rdma_rxe" load_rxe_intree
else
	check "load rdma_rxe (ours)" load_rxe ours
fi
check_match "this guest runs $RXE_IMPL" "$([ "$RXE_IMPL" = ours ] && echo out-of-tree || echo in-tree)" modinfo_loaded
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "barrier: rxe0 is up on both guests" barrier up
check "ping $PEER_IP" ping -c 2 -i 0.2 -w 20 "$PEER_IP"
# On the second kernel (6.12), one case of each path (TRAFFIC_BRIEF): the
# first kernel ran the whole list against its in-tree driver.
if [ "${RXE_AGAIN:-0}" = 1 ]; then
	TRAFFIC_BRIEF=1
	info "brief list on this kernel: one case of each path; the whole list ran on the first"
fi
traffic_list
[ "$RXE_IMPL" = theirs ] || info "counters: $(counters)"

# RDMA ATOMIC WRITE (py/mpe_peer.py), where the kernel has the verb (6.2
# on; both drivers serve it there): a as the requester towards b, then b
# towards a, so that each driver is requester and responder of it against
# the other. 22 does; 23, which leaves the work both of them would do
# alike to 22 (TRAFFIC_SWAPPED=1), does not. The requester judges its
# completions and, over a TCP control channel on MPE_PORT, the
# responder's memory.
MPE_PORT=18610

# mpe_way REQUESTER: one direction, REQUESTER (a or b) posting.
mpe_way() {
	local req=$1 resp

	if [ "$req" = a ]; then resp=b; else resp=a; fi
	check "barrier: ATOMIC WRITE from $req to $resp" barrier "mpe-$req"
	if [ "$GUEST" = "$req" ]; then
		check "ATOMIC WRITE requester ($RXE_IMPL) towards $resp: completions and $resp's memory as IBA requires" \
			python3 "$REPO/selftests/py/mpe_peer.py" requester "$MY_IP" "$PEER_IP" --port "$MPE_PORT"
	else
		check "ATOMIC WRITE responder ($RXE_IMPL) for $req: its QP stays in RTS, nothing completes on its side" \
			python3 "$REPO/selftests/py/mpe_peer.py" responder "$MY_IP" "$PEER_IP" --port "$MPE_PORT"
	fi
}

if ! kernel_has_mpe; then
	info "ATOMIC WRITE not run: kernel $(uname -r) has no such verb (6.2 on)"
elif [ "${TRAFFIC_SWAPPED:-0}" = 1 ]; then
	info "ATOMIC WRITE both ways: in 22, with the same two drivers"
else
	mpe_way a
	mpe_way b
fi

# Both ways under 1% loss (nftables on both guests' eth0): ours keeps the
# packets after a gap and theirs drops them, and each must recover with
# the other, every byte checked. Ours, as the requester, sends a NAKed
# packet again alone until an ACK for that packet and no more shows the
# responder dropping what followed; then it goes back over everything
# (go-back-N), as theirs expects. That is once per QP, more only when the
# telling ACK itself is lost, or when the NAKed packet had gone twice (the
# retry timer went back just before the NAK came), which proves nothing
# either way. A requester that took theirs for a responder that keeps
# would send alone on nearly every NAK (58 of 69 in one run, before the
# requester learnt only from a packet that had gone once).
check "the QP-linger shim (lib/rxe-linger.c) was built" have_tool rxe-linger.so
check "1% loss on what eth0 receives" wire_drop 1
if [ "$RXE_IMPL" = ours ]; then
	alone0=$(counter resent_alone)
	nak0=$(counter rcvd_seq_err)
fi
pair "1% loss: ibv_rc_pingpong -c, 64 KiB messages" "$PP_ROW" \
	env LD_PRELOAD="$LINGER" ibv_rc_pingpong -d rxe0 -g 1 -c -s 65536 -n 100
pair "1% loss: ib_write_bw 64 KiB" "$BW_ROW" rxe-perftest ib_write_bw -d rxe0 -x 1 -n 500 -F
if [ "$RXE_IMPL" = ours ]; then
	alone=$(( $(counter resent_alone) - alone0 ))
	naks=$(( $(counter rcvd_seq_err) - nak0 ))
	check "towards theirs, NAKed packets went alone at most 3 times per QP: $alone for $naks sequence NAKs on 2 QPs" \
		test "$alone" -le 6
	kept0=$(counter read_rsp_kept)
	refetch0=$(counter read_refetch)
fi
# READs of b from a under the same loss. Ours as the requester (22) keeps
# the responses past a gap and asks again for the gap only, with READ
# requests that theirs must take as duplicates: it answers one only where
# it does not start before the last it answered for the same READ
# request, and a refetch that broke that rule would go unanswered until
# the QP ran out of retries. Ours as the responder (23) answers the
# requests theirs sends again from a gap to the end of the READ.
# Theirs as the requester (23) waits for its ACK timer after most losses:
# count=30 took it 220 s and count=4 33 s, so it gets 2 of each size.
# shellcheck disable=SC2153 # exported by 23-interop-ours-serves
if [ "${RXE_IMPL_B:-}" = theirs ]; then nread=2; else nread=30; fi
ktest_pair a kread-loss 4 "1% loss: READs of 64 KiB and 200003 B, every byte checked" \
	ops=read count=$nread size=65536,200003
check "no loss" wire_drop
if [ "$RXE_IMPL" = ours ]; then
	# shellcheck disable=SC2153 # exported by 22-interop-theirs-serves
	# Refetches themselves ranged from 1 to 117 in five runs here, too
	# few at the low end to require one.
	if [ "$GUEST" = b ] && [ "${RXE_IMPL_A:-}" = theirs ]; then
		check "towards theirs, READ responses past a gap were kept (read_rsp_kept grew)" \
			test "$(counter read_rsp_kept)" -gt "$kept0"
		info "READ requests sent again for gaps only: $(( $(counter read_refetch) - refetch0 ))"
	fi
	check "no QP ran out of retries under loss" test "$(counter retry_exceeded_err)" = 0
fi
check "barrier: traffic done" barrier "done"
check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
