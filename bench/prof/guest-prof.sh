#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest side of bench/prof/prof.sh: load the driver, run one perftest
# case (or NVMe-oF with fio) between the guests (or a perftest case over
# the guest's own IP with one guest),
# and ask the tbprof plugin for a snapshot of the instruction counts at
# both ends of a window of steady traffic, with the hw counters beside.
#
# Environment (from prof.sh through lib/vm.sh): RXE_PROF_IMPL (ours,
# theirs), RXE_PROF_CASE (a perftest command line, or "nvme RW QD"),
# RXE_PROF_D (perftest -D, fio's runtime), RXE_PROF_SETTLE and RXE_PROF_WINDOW (seconds: from the first packet
# to the window, and the window), RXE_PROF_MTU.
#
# Leaves in $RESULTS/$GUEST: kallsyms.txt, tbprof-begin.txt and
# tbprof-end.txt (the plugin's), counters-begin.txt and counters-end.txt,
# client.log / server.log.

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"

# Waits without forking: what this guest runs is measured.
BARRIER_LOOKS_PER_S=20
barrier_nap() {
	nap 0.05
}

IMPL=${RXE_PROF_IMPL:-ours}
read -r -a CASE <<<"${RXE_PROF_CASE:-ib_write_bw -s 65536}"
D=${RXE_PROF_D:-12}
SETTLE=${RXE_PROF_SETTLE:-3}
WINDOW=${RXE_PROF_WINDOW:-5}
MTU=${RXE_PROF_MTU:-1500}
HWC=/sys/class/infiniband/rxe0/ports/1/hw_counters
SERVER=$MY_IP
[ "$NGUESTS" = 1 ] || SERVER=10.11.0.1
ROCE_MTU=1024
[ "$MTU" -lt 4200 ] || ROCE_MTU=4096

mkfifo /tmp/prof-nap.fifo
exec {_nap_fd}<>/tmp/prof-nap.fifo
nap() {
	read -rt "$1" -u "$_nap_fd" _ || true
}

# The counters of rxe0 and of eth0 as "name value" lines.
counters() {
	local f v

	for f in "$HWC"/* /sys/class/net/eth0/statistics/{tx,rx}_packets; do
		v=0
		read -r v 2>/dev/null <"$f" || true
		echo "${f##*/} $v"
	done
}

# snap NAME: ask the plugin for a snapshot and wait until it is written.
snap() {
	local i

	counters >"$_out/counters-$1.txt"
	echo "$1" >"$_out/.tbprof.cmd"
	mv "$_out/.tbprof.cmd" "$_out/tbprof.cmd"
	for ((i = 0; i < 600; i++)); do
		[ -e "$_out/tbprof-$1.done" ] && return 0
		nap 0.05
	done
	fail "the plugin wrote no snapshot $1 (is it loaded? RXE_VM_PLUGIN)"
	return 1
}

# profile: wait for traffic, settle, then the window between two snapshots.
profile() {
	local p0 p i

	read -r p0 </sys/class/net/eth0/statistics/rx_packets
	[ "$NGUESTS" = 2 ] || read -r p0 <"$HWC/rcvd_pkts"
	for ((i = 0; i < 1200; i++)); do
		if [ "$NGUESTS" = 2 ]; then
			read -r p </sys/class/net/eth0/statistics/rx_packets
		else
			read -r p <"$HWC/rcvd_pkts"
		fi
		[ $((p - p0)) -lt 100 ] || break
		nap 0.05
	done
	nap "$SETTLE"
	snap begin
	nap "$WINDOW"
	snap end
}

# NVMe-oF (CASE "nvme RW QD", two guests): a exports a null_blk through
# nvmet-rdma, b connects and runs fio for D seconds, RW (randread or
# randwrite) in 4 KiB blocks, QD in flight. Its I/Os are in client.log
# (fio's terse line); a takes the export down after b disconnected.
# shellcheck source=selftests/lib/nvme.sh
. "$REPO/selftests/lib/nvme.sh"
NQN=nqn.2026-11.io.rxe-testbed:prof-nvme

# shellcheck disable=SC2317 # called through check
nvmet_export() {
	modprobe -a nvmet nvmet-rdma null_blk && nvmet_up "$MY_IP"
}

nvme_host() {
	nvme_connect "$SERVER" && nvme_disk || return 1
	fio --name=prof --filename="/dev/$_disk" --rw="${CASE[1]}" --bs=4k \
		--iodepth="${CASE[2]}" --ioengine=libaio --direct=1 --size=64M \
		--time_based --runtime="$D" --output-format=terse --terse-version=3
}

ip link set eth0 mtu "$MTU"
check "load the driver ($IMPL)" load_rxe "$IMPL"
check "rdma link add" rxe_add rxe0 eth0
cat /proc/kallsyms >"$_out/kallsyms.txt"
args=(-d rxe0 -x "$(gid_index "$MY_IP")" -F -m "$ROCE_MTU")
[[ ${CASE[0]} == *_lat ]] || args+=(-D "$D")

if [ "${CASE[0]}" = nvme ]; then
	[ "$NGUESTS" = 2 ] || fail "nvme needs two guests"
	if [ "$GUEST" = a ]; then
		check "export a null_blk through nvmet-rdma" nvmet_export
	else
		check "load nvme-rdma" modprobe nvme-rdma
	fi
	barrier server-up
	if [ "$GUEST" = b ]; then
		nvme_host >"$_out/client.log" 2>&1 &
		client=$!
	fi
	profile
	if [ -n "${client:-}" ]; then
		wait "$client" || fail "client: exit status $? (client.log)"
		check "nvme disconnect" timeout -k 5 60 nvme disconnect -n "$NQN"
	fi
	barrier finished
	[ "$GUEST" = b ] || check "take the export down" nvmet_down
else
	if [ "$GUEST" = a ]; then
		"${CASE[@]}" "${args[@]}" >"$_out/server.log" 2>&1 &
		server=$!
	fi
	barrier server-up
	if [ "$NGUESTS" = 1 ] || [ "$GUEST" = b ]; then
		nap 1
		"${CASE[@]}" "${args[@]}" "$SERVER" >"$_out/client.log" 2>&1 &
		client=$!
	fi
	profile
	if [ -n "${client:-}" ]; then
		wait "$client" || fail "client: exit status $? (client.log)"
	fi
	if [ -n "${server:-}" ]; then
		wait "$server" || fail "server: exit status $? (server.log)"
	fi
	barrier finished
fi
check "rdma link delete" rxe_del rxe0
finish
