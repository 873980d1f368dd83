#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stage 2 of a test guest: PID 1 after switch_root, run by the host's bash
# from the host's root (read-only 9p under a tmpfs overlay).
#
# Mounts the rest of the system, brings the network up, runs the test
# script named in the run's env file under a timeout and powers off. Talks
# to the host only through the results share (9p tag "results", no cache):
#
#   $RESULTS/<guest>/env       written by the host: the test's environment
#   $RESULTS/<guest>/test.log  the test's stdout and stderr (also on console)
#   $RESULTS/<guest>/dmesg.log the kernel log at the end
#   $RESULTS/<guest>/status    the test's exit status, written last
#
# PID 1 must never exit, so there is no set -e here and every path ends in
# poweroff.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=${TERM:-linux}

log() { echo "rxe-testbed: $*"; }

poweroff_now() {
	sync
	sleep 0.5
	echo o >/proc/sysrq-trigger
	sleep 60
}

# Every exec costs ~0.1 s under TCG: test with builtins where we can.
mounted() {
	local dir rest

	while read -r _ dir rest; do
		[ "$dir" = "$1" ] && return 0
	done </proc/mounts
	return 1
}

# mnt ARGS... DIR: mount, unless DIR (a real path, as /proc/mounts has
# it) is mounted already, as stage 1 leaves most.
mnt() {
	local dir=${*: -1}

	[ -d "$dir" ] || mkdir -p "$dir"
	mounted "$dir" || mount "$@" || log "mount $* failed"
}

read -r cmdline </proc/cmdline
guest=a
[[ $cmdline =~ rxetb\.guest=([a-z]+) ]] && guest=${BASH_REMATCH[1]}

mnt -t proc proc /proc
mnt -t sysfs sysfs /sys
mnt -t devtmpfs devtmpfs /dev
mnt -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mnt -t tmpfs -o mode=1777 tmpfs /dev/shm
mnt -t tmpfs -o mode=1777 tmpfs /tmp
mnt -t tmpfs -o mode=0755 tmpfs /run
# Named by its real path, as /proc/mounts has it: /lib is a symlink.
mnt -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 modules /usr/lib/modules
mounted /sys/kernel/config || modprobe configfs
mnt -t configfs configfs /sys/kernel/config
mnt -t debugfs debugfs /sys/kernel/debug
mnt -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=512000 results /results
RESULTS=/results
out=$RESULTS/$guest

if [ ! -r "$out/env" ]; then
	log "no $out/env: nothing to run"
	poweroff_now
fi
# shellcheck source=/dev/null
. "$out/env"

echo "rxe-$guest" >/proc/sys/kernel/hostname
echo "rxe-$guest" >/etc/hostname
printf '127.0.0.1\tlocalhost\n10.11.0.1\trxe-a\n10.11.0.2\trxe-b\nfd11::1\trxe-a\nfd11::2\trxe-b\n' >/etc/hosts

# The in-tree rdma_rxe must never shadow ours: `rdma link add` may
# request_module("rdma-link-rxe"). load_rxe rewrites this for "theirs".
[ -d /etc/modprobe.d ] || mkdir -p /etc/modprobe.d
if [ "${RXE_IMPL:-ours}" = ours ]; then
	echo "install rdma_rxe /bin/false" >/etc/modprobe.d/rxe-testbed.conf
fi

ip -force -batch - <<EOF
link set lo up
link set eth0 up
addr add $MY_IP/24 dev eth0
addr add $MY_IP6/64 dev eth0 nodad
EOF
# Carrier comes up asynchronously after "link set up".
for _ in {1..50}; do
	read -r state </sys/class/net/eth0/operstate
	[ "$state" = up ] && break
	sleep 0.1
done

echo "rxe-testbed: guest $guest running $TEST" >/dev/kmsg
read -r release </proc/sys/kernel/osrelease
log "guest $guest ($release): running $TEST (timeout ${GUEST_TIMEOUT}s)"

if [ "${RXE_VM_SHELL:-0}" = 1 ]; then
	log "interactive shell; exit it to power off (the test is at \$TEST)"
	setsid -c -w bash -l </dev/ttyS0 >/dev/ttyS0 2>&1
	status=0
else
	cd /tmp || true
	timeout -k 10 "$GUEST_TIMEOUT" bash "$TEST" </dev/null 2>&1 | tee "$out/test.log"
	status=${PIPESTATUS[0]}
	if [ "$status" = 124 ] || [ "$status" = 137 ]; then
		echo "guest $guest: test timed out after ${GUEST_TIMEOUT}s" | tee -a "$out/test.log" >"$out/reason"
		# What was stuck where: blocked tasks to the kernel log, and
		# every process with its wait channel.
		echo w >/proc/sysrq-trigger
		ps -eo pid,stat,wchan:32,args | tee "$out/ps.log"
		# The RDMA side of it: every QP with its driver state, and
		# the counters.
		{
			timeout 10 rdma -d -d res show qp
			timeout 10 rdma statistic show
		} >"$out/rdma.log" 2>&1
	fi
fi
log "guest $guest: test exited with status $status"
dmesg >"$out/dmesg.log" 2>&1
echo "$status" >"$out/status"
poweroff_now
