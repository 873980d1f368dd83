#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The test bed itself, one guest: network, mounts and the RDMA core
# modules work before any driver is involved.
#
# guests: 1
# timeout: 180

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"

check "running the kernel the host prepared ($KVER)" test "$(uname -r)" = "$KVER"
check "hostname is rxe-$GUEST" test "$(hostname)" = "rxe-$GUEST"
check_match "lo is up" "state (UNKNOWN|UP)" ip -o link show dev lo
check_match "eth0 is up with carrier" "state UP" ip -o link show dev eth0
check_match "eth0 has MTU 1500" "mtu 1500 " ip -o link show dev eth0
check_match "eth0 has $MY_IP/24" "inet $MY_IP/24 " ip -o -4 addr show dev eth0
check_match "eth0 has $MY_IP6/64" "inet6 $MY_IP6/64 " ip -o -6 addr show dev eth0
check "ping $MY_IP" ping -c 1 -W 2 "$MY_IP"
check "ping $MY_IP6" ping -c 1 -W 2 "$MY_IP6"
check_match "/proc/cpuinfo is readable" "^processor" cat /proc/cpuinfo
check "results share is writable" sh -c "echo x >$RESULTS/$GUEST/write-test && rm $RESULTS/$GUEST/write-test"
check "/tmp is writable" touch /tmp/write-test
check "root (tmpfs overlay on the host) is writable" touch /etc/rxe-testbed-write-test
check "configfs is mounted" mountpoint -q /sys/kernel/config
check "debugfs is mounted" mountpoint -q /sys/kernel/debug
check "/dev/shm is mounted" mountpoint -q /dev/shm
check "$REPO is visible" test -r "$REPO/selftests/lib/guest.sh"
check "modprobe ib_core" modprobe ib_core
check "modprobe ib_uverbs" modprobe ib_uverbs
check "modprobe rdma_ucm" modprobe rdma_ucm
check_match "ib_core and ib_uverbs are loaded" "^ib_uverbs" lsmod
check "/dev/infiniband/rdma_cm exists" test -c /dev/infiniband/rdma_cm
# No RDMA device yet: ibv_devices just has to run and list nothing.
check "ibv_devices runs" ibv_devices
check "rdma tool runs" rdma dev show
dmesg_clean

finish
