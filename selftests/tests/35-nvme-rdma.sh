#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A real kernel consumer: NVMe over Fabrics on RDMA. Guest b exports a
# memory-backed null_blk namespace through nvmet-rdma (configfs) on rxe0;
# guest a connects with `nvme connect -t rdma`, writes 64 MiB (16 on a
# second kernel) of a known
# pattern with O_DIRECT, reads it back with O_DIRECT and compares, and
# disconnects. The target checks that its namespace holds the same bytes
# and is torn down. Then once more, 8 MiB, with nvmet-rdma on shared
# receive queues (use_srq=1); and 16 MiB with both guests dropping 1% of
# what they receive while the host writes and reads: the data must come
# through intact with no I/O error, reset or reconnect. rdma_rxe is
# unloaded on both sides.
#
# nvme-rdma registers host memory with fast registration (REG_MR) and
# takes remote invalidation (SEND with invalidate) from nvmet-rdma, which
# moves the data with RDMA READ and WRITE.
#
# guests: 2
# timeout: 600
# kernels: all

# Functions below run through check, which shellcheck cannot follow.
# shellcheck disable=SC2317

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"

# Writes are pulled by the target with RDMA READs; on the TCG bed a
# 64 MiB write can take a minute.
CHECK_TIMEOUT=300
BARRIER_TIMEOUT=400

# shellcheck source=selftests/lib/nvme.sh
. "$REPO/selftests/lib/nvme.sh"

# The main phase's size. A second kernel (RXE_AGAIN) runs it with 16 MiB:
# what differs between kernels is nvme-rdma and nvmet-rdma themselves,
# which every phase exercises; the volume ran on the first.
MAIN_MIB=64
[ "${RXE_AGAIN:-0}" != 1 ] || MAIN_MIB=16

NQN=nqn.2024-11.io.rxe-testbed:nvme-rdma

nvmet_setup() {
	nvmet_up "$MY_IP" || return 1
	dmesg | grep "nvmet_rdma: enabling port" | tail -n 1
}

# The namespace block device of our subsystem, e.g. nvme0n1.
nvme_dev() {
	nvme_disk >&2 || return 1
	echo "$_disk"
}

no_controller() {
	! nvme_ctrl || { echo "$_ctrl still there"; return 1; }
}

# target_holds PHASE MIB SEEK: the MIB MiB at SEEK MiB of nullb0 are what
# the host says it wrote in PHASE.
target_holds() {
	local want got

	read -r want _ <"$RESULTS/nvme-$1.sha256" || { echo "no checksum from the host"; return 1; }
	got=$(dd if=/dev/nullb0 bs=1M skip="$3" count="$2" iflag=direct status=none | sha256sum)
	got=${got%% *}
	echo "host wrote $want, nullb0 holds $got"
	[ "$want" = "$got" ]
}

# write_at FILE MIB SEEK / read_back FILE MIB SEEK, on /dev/$DEV, O_DIRECT.
write_at() {
	dd if="$1" of="/dev/$DEV" bs=1M count="$2" seek="$3" oflag=direct conv=fsync 2>&1
}

read_back() {
	echo 3 >/proc/sys/vm/drop_caches
	dd if="/dev/$DEV" of=/tmp/nvme-readback bs=1M count="$2" skip="$3" iflag=direct 2>&1 &&
		cmp "$1" /tmp/nvme-readback && echo "$2 MiB identical"
}

# The kernel log has no sign that nvme-rdma gave up on a command: an I/O
# error, a timeout, a reset or a reconnect of the controller.
no_nvme_trouble() {
	! nvme_klog_trouble
}

reload_nvmet_rdma() {
	rmmod nvmet_rdma && modprobe nvmet-rdma "$@"
}

# lossy_start PHASE / lossy_end PHASE: in the lossy phase, once the host
# is connected (rdma_cm's MADs are not what it tests), both guests drop
# 1% of what eth0 receives until the host's I/O is done.
lossy_start() {
	[ "$1" = lossy ] || return 0
	check "barrier: $1 host connected" barrier "$1-connected"
	check "$1: drop 1% of what eth0 receives, at random" wire_drop 1
}

lossy_end() {
	[ "$1" = lossy ] || return 0
	check "barrier: $1 I/O done" barrier "$1-io"
	check "$1: stop dropping (what was dropped: see checks.log)" wire_drop
	info "$1: recovery on rxe0:" "$(rdma statistic show link rxe0/1 2>/dev/null |
		grep -oE '(rcvd_seq_err|completer_retry_err|retry_early|read_refetch|nak_held|ack_held) [0-9]+' |
		tr '\n' ' ')"
}

# target_phase PHASE MIB SEEK: export nullb0, wait for the host, check
# what it wrote, tear the export down.
target_phase() {
	check_match "$1: nvmet exports nullb0 as $NQN on rdma $MY_IP:4420" \
		"enabling port 1 \\($MY_IP:4420\\)" nvmet_setup
	check "barrier: $1 target ready" barrier "$1-target"
	lossy_start "$1"
	lossy_end "$1"
	check "barrier: $1 host done" barrier "$1-host"
	check_match "$1: the namespace holds the $2 MiB the host wrote at $3 MiB (sha256 of nullb0)" \
		"host wrote" target_holds "$1" "$2" "$3"
	check "$1: tear the nvmet subsystem and port down (configfs) in under 20 s" \
		nvmet_down_quick
}

# nvmet_down_quick: nvmet_down in under 20 s. It drains the export's QPs,
# and with use_srq=1 ib_drain_qp() (6.11 on) waits up to a minute for
# each QP's Last WQE Reached event: a driver that never raises it holds
# the teardown that long.
nvmet_down_quick() {
	local t0=$EPOCHSECONDS

	nvmet_down || return 1
	[ $((EPOCHSECONDS - t0)) -lt 20 ] ||
		{ echo "nvmet_down took $((EPOCHSECONDS - t0)) s"; return 1; }
}

# host_phase PHASE MIB SEEK KEY: connect, write a pattern, read it back,
# disconnect.
host_phase() {
	local pat=/tmp/nvme-$1

	check "$1: make a $2 MiB pattern" make_pattern "$pat" "$2" "$4"
	sha256sum "$pat" >"$RESULTS/nvme-$1.sha256"
	check "barrier: $1 target ready" barrier "$1-target"
	check "$1: nvme connect -t rdma -a $PEER_IP -s 4420 -n $NQN" \
		nvme_connect "$PEER_IP"
	DEV=$(nvme_dev) || DEV=
	check "$1: the namespace of $NQN shows up as a block device ($DEV)" test -n "$DEV"
	lossy_start "$1"
	if [ -n "$DEV" ]; then
		check_match "$1: write $2 MiB of the pattern at $3 MiB of /dev/$DEV with O_DIRECT" \
			"^$2\\+0 records out" write_at "$pat" "$2" "$3"
		check_match "$1: read $2 MiB back with O_DIRECT: identical to the pattern" \
			"$2 MiB identical" read_back "$pat" "$2" "$3"
	fi
	lossy_end "$1"
	check "$1: no I/O error, reset or reconnect of the controller" no_nvme_trouble
	check "$1: nvme disconnect -n $NQN" nvme disconnect -n "$NQN"
	check "$1: the controller is gone after the disconnect" no_controller
	check "barrier: $1 host done" barrier "$1-host"
}

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "rdma link add rxe0 type rxe netdev eth0" rxe_add rxe0 eth0
check "barrier: rxe0 is up on both" barrier rxe-up

if [ "$GUEST" = b ]; then
	check "load nvmet and nvmet-rdma" modprobe -a nvmet nvmet-rdma
	check "a 1 GiB memory-backed null_blk, nullb0" \
		modprobe null_blk nr_devices=1 memory_backed=1 gb=1
	target_phase main "$MAIN_MIB" 0
	# Again with nvmet-rdma's shared receive queues: kernel SRQs.
	check "reload nvmet-rdma with use_srq=1" reload_nvmet_rdma use_srq=1
	check_match "nvmet-rdma uses SRQs" "^Y" cat /sys/module/nvmet_rdma/parameters/use_srq
	target_phase srq 8 64
	# A lossy link, plain receive queues again: nvmet-rdma's READs of the
	# host's data and its SENDs of the completions share each QP, so
	# NAKs and lost responses meet READs waiting for theirs.
	check "reload nvmet-rdma without SRQs" reload_nvmet_rdma
	target_phase lossy 16 72
	check "rmmod nvmet_rdma nvmet null_blk" rmmod nvmet_rdma nvmet null_blk
else
	check "load nvme-rdma" modprobe nvme-rdma
	host_phase main "$MAIN_MIB" 0 000102030405060708090a0b0c0d0e0f
	host_phase srq 8 64 f0e0d0c0b0a090807060504030201000
	host_phase lossy 16 72 5a5b5c5d5e5f60616263646566676869
	check "rmmod nvme_rdma" rmmod nvme_rdma
fi

check "barrier: target torn down" barrier torn-down
check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
