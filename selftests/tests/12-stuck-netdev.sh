#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A netdev that keeps our skbs: a tbf qdisc at 1 kbit/s on eth0 and a peer
# that is only a permanent ARP entry. A QP that cannot get its packets out
# must fail with "retry exceeded" instead of waiting silently, destroying
# it must not wait for the skbs, `rdma link delete` must not either; rmmod
# is refused while the qdisc still holds our skbs (their destructor is our
# code) and goes through once the qdisc is gone.
#
# guests: 1
# timeout: 180

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"

FAKE_PEER=10.11.0.99

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "add rxe0 on eth0" rxe_add rxe0 eth0
check "a permanent neighbour $FAKE_PEER that answers nothing" \
	ip neigh replace "$FAKE_PEER" lladdr 52:54:00:11:00:99 dev eth0 nud permanent
check "tbf 1 kbit/s on eth0" \
	tc qdisc replace dev eth0 root tbf rate 1kbit burst 1600 limit 1000000
check "pyverbs: a QP whose skbs the qdisc keeps fails and is destroyed (see checks.log)" \
	/usr/bin/python3 "$REPO/selftests/py/stuck.py" rxe0 "$FAKE_PEER"
check_match "retry_exceeded_err counted it" "retry_exceeded_err [1-9]" \
	rdma statistic show link rxe0/1
check "rdma link delete rxe0 does not wait for the qdisc" timeout 20 rdma link delete rxe0
check_match "rmmod is refused while the qdisc holds our skbs" "in use" \
	sh -c '! rmmod rdma_rxe 2>&1'
check "tc qdisc del dev eth0 root (frees the skbs)" tc qdisc del dev eth0 root
check "rmmod rdma_rxe" sh -c 'for i in $(seq 50); do rmmod rdma_rxe 2>/dev/null && exit 0; sleep 0.1; done; rmmod rdma_rxe'
ip neigh del "$FAKE_PEER" dev eth0 || true
dmesg_clean

finish
