#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The device on one guest: `rdma link add` binds it to eth0, rdma-core's
# rxe provider claims it, the port and GID table follow the netdev (link
# state, MTU, addresses, unregistration), and `rdma link delete` plus
# rmmod leave nothing behind.
#
#   guest a: eth0 (10.11.0.1, fd11::1) <- rxe0
#            veth0 <-> veth1 (scratch pair for unregistration) <- rxe1
#
# guests: 1
# timeout: 240
# kernels: all

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"

port=/sys/class/infiniband/rxe0/ports/1

# port_is STATE: wait up to 5 s for the port's state to read STATE.
port_is() {
	local t=50 s

	while [ "$t" -gt 0 ]; do
		read -r s <"$port/state"
		[[ $s == *"$1" ]] && return 0
		nap 0.1
		t=$((t - 1))
	done
	echo "port state is '$s', want $1"
	return 1
}

# within S CMD...: CMD's exit code, or 124 (as timeout(1)) while it still
# runs after S seconds. A task stuck in the kernel ignores the signals
# timeout(1) sends, so this does not wait for it.
within() {
	local s=$1 t=$(($1 * 10)) pid

	shift
	"$@" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$t" -le 0 ]; then
			echo "$* still runs after ${s}s"
			return 124
		fi
		nap 0.1
		t=$((t - 1))
	done
	wait "$pid"
}

# active_mtu NETDEV_MTU WANT: set eth0's MTU, the port's active MTU must follow.
active_mtu() {
	ip link set eth0 mtu "$1" || return 1
	ibv_devinfo -d rxe0 | grep -E "active_mtu:[[:space:]]+$2 "
}

# gone DEV: wait up to 10 s for an RDMA device to disappear.
gone() {
	local t=100

	while [ "$t" -gt 0 ]; do
		[ -e "/sys/class/infiniband/$1" ] || return 0
		nap 0.1
		t=$((t - 1))
	done
	echo "$1 still exists"
	return 1
}

check "load rdma_rxe ($RXE_IMPL)" load_rxe
if [ "$RXE_IMPL" = ours ]; then
	check_match "the loaded rdma_rxe is ours (out-of-tree)" "out-of-tree" modinfo_loaded
fi
check "rdma link add rxe0 type rxe netdev eth0" rxe_add rxe0 eth0
check_match "rdma link shows rxe0/1 ACTIVE on eth0" "rxe0/1 state ACTIVE .*netdev eth0" rdma link show
expect_fail "a second device on eth0 is refused" rdma link add rxe1 type rxe netdev eth0
if [ "$RXE_IMPL" = ours ]; then
	check_match "the refusal names the device that holds eth0" "eth0 already has RDMA device rxe0" dmesg
	# The in-tree driver accepts lo; RoCE needs an Ethernet link.
	expect_fail "rdma link add on lo is refused" rdma link add rxe1 type rxe netdev lo
fi
check_match "ibv_devices lists rxe0 (the rxe provider claims it)" "^ +rxe0 " ibv_devices
check_match "ibv_devinfo -d rxe0: PORT_ACTIVE" "state:[[:space:]]+PORT_ACTIVE" ibv_devinfo -d rxe0
check_match "ibv_devinfo -d rxe0: link layer Ethernet" "link_layer:[[:space:]]+Ethernet" ibv_devinfo -d rxe0
check_match "ibv_devinfo -d rxe0: node GUID from eth0's MAC" "node_guid:[[:space:]]+5054:00ff:fe11:000" ibv_devinfo -d rxe0
check_match "ibv_devinfo -v lists ::ffff:$MY_IP as a RoCE v2 GID" "GID\[ *[0-9]+\]:[[:space:]]+::ffff:$MY_IP, RoCE v2" ibv_devinfo -v -d rxe0
check_match "ibv_devinfo -v lists $MY_IP6 as a RoCE v2 GID" "GID\[ *[0-9]+\]:[[:space:]]+$MY_IP6, RoCE v2" ibv_devinfo -v -d rxe0
check "the IPv4 GID is index 1 (perftest -x 1)" test "$(gid_index "$MY_IP")" = 1
check_match "device caps advertise fast registration and memory windows" "MEM_MGT_EXTENSIONS" ibv_devinfo -v -d rxe0
check_match "rdma statistic shows the hw counters" "sent_pkts [0-9]+ rcvd_pkts [0-9]+" rdma statistic show link rxe0/1

# A new address becomes a GID, and goes away with the address.
ip addr add 10.11.9.1/24 dev eth0
check "10.11.9.1 is in the GID table" sh -c "for i in 1 2 3 4 5 6 7 8 9 10; do grep -qx 0000:0000:0000:0000:0000:ffff:0a0b:0901 $port/gids/* && exit 0; sleep 0.3; done; exit 1"
ip addr del 10.11.9.1/24 dev eth0
check "10.11.9.1 leaves the GID table with the address" sh -c "for i in 1 2 3 4 5 6 7 8 9 10; do grep -qx 0000:0000:0000:0000:0000:ffff:0a0b:0901 $port/gids/* || exit 0; sleep 0.3; done; exit 1"

# The active MTU is the largest RoCE MTU whose packets fit in the netdev's.
check "netdev MTU 9000: active MTU 4096" active_mtu 9000 4096
check "netdev MTU 4000: active MTU 2048" active_mtu 4000 2048
check "netdev MTU 1000: active MTU 512" active_mtu 1000 512
check "netdev MTU 576: active MTU 256" active_mtu 576 256
check "netdev MTU 1500: active MTU 1024" active_mtu 1500 1024

# The port follows the link.
ip link set eth0 down
check "eth0 down: port DOWN" port_is DOWN
check_match "ibv_devinfo agrees: PORT_DOWN" "PORT_DOWN" ibv_devinfo -d rxe0
ip link set eth0 up
check "eth0 up: port ACTIVE" port_is ACTIVE
check "eth0 up: the IPv4 GID is back" rxe_wait_ready rxe0
if [ "$RXE_IMPL" = ours ]; then
	check_match "the link went down once (link_downed counter)" "link_downed 1 " rdma statistic show link rxe0/1
fi

# Unregistering the netdev removes the device bound to it.
check "create veth0/veth1" ip link add veth0 type veth peer name veth1
ip link set veth0 up
ip link set veth1 up
# A name taken is refused by ib_core only when the device registers, after
# the driver set it up: the driver must undo that and let go of its lock.
expect_fail "rdma link add rxe0 on veth0, a name taken, is refused at once" \
	within 20 rdma link add rxe0 type rxe netdev veth0
check "rdma link add rxe1 type rxe netdev veth0" rdma link add rxe1 type rxe netdev veth0
check_match "rxe1 is on veth0" "rxe1/1 .*netdev veth0" rdma link show
check "ip link del veth0" ip link del veth0
check "rxe1 is gone with veth0" gone rxe1
check_match "rxe0 is still there" "rxe0/1 state ACTIVE" rdma link show

check "rdma link delete rxe0" rxe_del rxe0
check "rxe0 is gone" gone rxe0
check "a device can be added again after delete" rxe_add rxe0 eth0
check "rdma link delete rxe0 again" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
check "rdma_rxe is unloaded" test ! -d /sys/module/rdma_rxe
expect_fail "no objects leaked (the driver's audit at delete and unload)" sh -c "dmesg | grep -E 'objects leaked|still waiting for'"
dmesg_clean

finish
