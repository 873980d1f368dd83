# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Capturing and dissecting RoCEv2 packets in the wire tests (4x). Sourced
# after guest.sh.
#
#   capture_start FILE      dumpcap on eth0, UDP port 4791 (or the filter
#                           CAPTURE_FILTER), libpcap format, at most
#                           CAPTURE_MAX (3000) frames; returns once the
#                           capture runs
#   capture_stop FILE       stop it and keep a copy in the guest's results
#   TSHARK_OPTS             tshark options that leave the InfiniBand
#                           dissector alone to judge the payloads
#
# Wireshark hands InfiniBand payloads to the heuristics of protocols that
# run over RDMA; RPC-over-RDMA first of all would claim test payloads and
# mark them malformed (`--disable-heuristic rpcordma` in older releases,
# `rpcrdma_infiniband` in Wireshark 4.0). They are all switched off.

TSHARK_OPTS=()
for _h in rpcrdma_infiniband smb_direct_infiniband iser_infiniband nvme_rdma \
	lnet_ib sdp_infiniband fc_infiniband eth_over_ib smcr_infiniband; do
	TSHARK_OPTS+=(--disable-heuristic "$_h")
done
unset _h

# shellcheck disable=SC2317 # called through check
_capture_wait() {
	local file=$1 t=300

	while [ "$t" -gt 0 ]; do
		[ -s "$file" ] && [ "$(stat -c %s "$file")" -ge 24 ] && return 0
		nap 0.1
		t=$((t - 1))
	done
	echo "dumpcap wrote no capture header to $file in 30 s"
	cat "$RESULTS/$GUEST/dumpcap.log"
	return 1
}

capture_start() {
	rm -f "$1"
	# The capture outlives the checks of the traffic it records.
	CHECK_TIMEOUT=${CAPTURE_TIMEOUT:-400} bg dumpcap dumpcap -i eth0 -f "${CAPTURE_FILTER:-udp port 4791}" -P -c "${CAPTURE_MAX:-3000}" -w "$1"
	check "dumpcap captures UDP port 4791 on eth0" _capture_wait "$1"
}

capture_stop() {
	# Frames still in flight (the last ACKs) get a moment to arrive.
	sleep 1
	bg_kill dumpcap
	cp "$1" "$RESULTS/$GUEST/" 2>/dev/null || true
}
