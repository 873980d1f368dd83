# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# NVMe over RDMA in a guest, for selftests/tests/35-nvme-rdma.sh and the
# bench's nvme case (bench/lib/guest-bench.sh). Source it after
# lib/guest.sh and set NQN, the subsystem's name. The target exports
# /dev/nullb0 (null_blk) through nvmet's configfs on rdma port 4420; the
# host connects with nvme-cli and finds the namespace's block device.

NVMET_PORT=/sys/kernel/config/nvmet/ports/1

# nvmet_up IP: export nullb0 as $NQN on rdma IP:4420.
nvmet_up() {
	local subsys=/sys/kernel/config/nvmet/subsystems/$NQN

	mkdir "$subsys" &&
		echo 1 >"$subsys/attr_allow_any_host" &&
		mkdir "$subsys/namespaces/1" &&
		echo -n /dev/nullb0 >"$subsys/namespaces/1/device_path" &&
		echo 1 >"$subsys/namespaces/1/enable" &&
		mkdir "$NVMET_PORT" &&
		echo rdma >"$NVMET_PORT/addr_trtype" &&
		echo ipv4 >"$NVMET_PORT/addr_adrfam" &&
		echo "$1" >"$NVMET_PORT/addr_traddr" &&
		echo 4420 >"$NVMET_PORT/addr_trsvcid" &&
		ln -s "$subsys" "$NVMET_PORT/subsystems/$NQN"
}

# nvmet_down: take down whatever of the export is there (a failed
# nvmet_up leaves part of it); fails when a part would not go.
nvmet_down() {
	local subsys=/sys/kernel/config/nvmet/subsystems/$NQN rc=0

	[ ! -L "$NVMET_PORT/subsystems/$NQN" ] || rm -f "$NVMET_PORT/subsystems/$NQN" || rc=1
	[ ! -d "$NVMET_PORT" ] || rmdir "$NVMET_PORT" || rc=1
	if [ -d "$subsys/namespaces/1" ]; then
		echo 0 >"$subsys/namespaces/1/enable" || rc=1
		rmdir "$subsys/namespaces/1" || rc=1
	fi
	[ ! -d "$subsys" ] || rmdir "$subsys" || rc=1
	return "$rc"
}

# nvme_connect IP: connect to $NQN at rdma IP:4420, in 60 s at most. A
# controller that loses its target tries to reconnect every 5 s, and
# gives up after NVME_LOSS_TMO / 5 attempts (default 60 s: 12; nvme-cli's
# own 600 s makes 120). Then I/O on a link that died fails: 210 s into
# the O_DIRECT write here, the first attempt taking 107 s of rdma_cm
# timeouts and each later one 8 s, where it would hang for over ten
# minutes and hold a test or a benchmark's boot.
nvme_connect() {
	timeout -k 5 60 nvme connect -t rdma -a "$1" -s 4420 -n "$NQN" \
		--reconnect-delay=5 --ctrl-loss-tmo="${NVME_LOSS_TMO:-60}"
}

# nvme_ctrl: the controller (nvme0) connected to $NQN, in _ctrl; false
# when there is none.
nvme_ctrl() {
	local c n

	_ctrl=
	for c in /sys/class/nvme/nvme*; do
		read -r n 2>/dev/null <"$c/subsysnqn" || continue
		[ "$n" = "$NQN" ] || continue
		_ctrl=${c##*/}
		return 0
	done
	return 1
}

# nvme_disk: wait up to 10 s for the namespace's block device (nvme0n1),
# in _disk. With native multipath the disk hangs off the subsystem
# (nvme-subsys0/nvme0n1) and the controller only has a hidden path device
# (nvme0c0n1); without it the disk is under the controller.
nvme_disk() {
	local d n q end=$((SECONDS + 10))

	_disk=
	while :; do
		for d in /sys/class/nvme-subsystem/nvme-subsys* /sys/class/nvme/nvme*; do
			read -r q 2>/dev/null <"$d/subsysnqn" || continue
			[ "$q" = "$NQN" ] || continue
			for n in "$d"/nvme*n*; do
				n=${n##*/}
				[ ! -b "/dev/$n" ] || { _disk=$n; return 0; }
			done
		done
		[ "$SECONDS" -lt "$end" ] || break
		barrier_nap
	done
	echo "no namespace of $NQN appeared in /dev in 10 s"
	return 1
}

# nvme_klog_trouble [LINE]: print the kernel log's signs, after its line
# LINE (default: all of it), that nvme gave up on a command or the
# controller: an I/O error, a timeout, a reset or a reconnect. True when
# there is one.
nvme_klog_trouble() {
	dmesg | tail -n +"$((${1:-0} + 1))" |
		grep -E 'nvme.*(I/O error|timeout|resetting|reconnect|Reconnecting)|I/O error, dev nvme'
}
