#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The test bed itself, one guest: network, mounts and the RDMA core
# modules work before any driver is involved. Then the kernel's in-tree
# rdma_rxe, whatever RXE_IMPL says: add rxe0, check the port and GID
# table, move real traffic over loopback with ib_write_bw, delete it and
# unload. Proves the bed can run RDMA traffic and is the reference the
# tests of our driver are judged against (one boot for both: a boot is
# about 10 s of a test's time).
# As a "reference: theirs" test it runs once more when it fails, the
# bed's own checks with it: they load nothing of ours.
#
# guests: 1
# timeout: 300
# reference: theirs

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

# The in-tree driver: the reference.
check "load the in-tree rdma_rxe" load_rxe theirs
check "rdma link add rxe0 type rxe netdev eth0" rxe_add rxe0 eth0
check_match "rdma link shows rxe0 ACTIVE on eth0" "rxe0/1 state ACTIVE .*netdev eth0" rdma link show
check_match "ibv_devinfo -d rxe0: PORT_ACTIVE" "PORT_ACTIVE" ibv_devinfo -d rxe0
check "GID index 1 is $MY_IP" test "$(gid_index "$MY_IP")" = 1
check_match "GID index 1 is RoCE v2" "RoCE v2" \
	cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/1

bg server ib_write_bw -d rxe0 -x 1 -D 2
check "ib_write_bw server listens" wait_listen 18515
check_match "ib_write_bw client to $MY_IP for 2 s" "^ *65536 +[0-9]+" \
	ib_write_bw -d rxe0 -x 1 -D 2 "$MY_IP"
check_match "ib_write_bw server finished" "^ *65536 +[0-9]+" bg_wait server

check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
