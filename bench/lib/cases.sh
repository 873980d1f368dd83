# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The benchmark's cases, in one place: bench/run.sh plans (and times) the
# guest runs from it, and the guests run exactly what it prints.
#
#   bench_cases TOPO     TOPO is loop (one guest, over its own IP) or two
#                        (two guests on one wire)
#
# prints one case a line, in the order they run within a driver's turn:
#
#   ID KIND MTU TOOL SIZE QPS LOSS
#
#   ID    mtu1500/write_bw/64K/q1, mtu1500/msgrate_write/64/q1,
#         mtu1500/write_lat/64, mtu1500/loss1/write_bw/64K/q1, mtu9000/iperf3,
#         mtu1500/nvme/16M, mtu1500/drop1/nvme/16M
#   KIND  bw (perftest -D, bandwidth), msgrate (64 B with a post list and CQ
#         moderation, message rate), lat (perftest -n, typical and p99),
#         loss (bw on a lossy wire: LOSS % netem loss, or dP: P % dropped
#         by nftables, wire_drop), iperf (iperf3 TCP, the wire ceiling:
#         runs once per boot, not once per driver), nvme (NVMe-oF over
#         RDMA: SIZE MiB written and read back with O_DIRECT, write and
#         read MB/s, with dd in 1 MiB blocks, or with QPS above 1 with fio
#         in 4 KiB blocks in random order, QPS in flight; LOSS as for loss,
#         only while the data moves)
#   MTU   netdev MTU (1500: RoCE MTU 1024; 9000: RoCE MTU 4096)
#
# RXE_BENCH_QUICK=1 gives the short list; RXE_BENCH_FILTER, an extended
# regex, keeps only the cases whose TOPO/ID matches (two/mtu1500/write_bw/).

# Size in bytes -> label.
bench_size_label() {
	case $1 in
	1048576) echo 1M ;;
	65536) echo 64K ;;
	4096) echo 4K ;;
	*) echo "$1" ;;
	esac
}

# _bc KIND MTU TOOL SIZE QPS [LOSS]: print one case line.
_bc() {
	local kind=$1 mtu=$2 tool=$3 size=$4 qps=$5 loss=${6:-0} id name tag

	name=${tool#ib_}
	case $kind in
	bw) id=mtu$mtu/$name/$(bench_size_label "$size")/q$qps ;;
	msgrate) id=mtu$mtu/msgrate_${name%_bw}/$size/q$qps ;;
	lat) id=mtu$mtu/$name/$size ;;
	loss)
		# dP (nftables' drop) is drop<P> in the ID, netem's P loss<P>.
		tag=loss$loss
		[[ $loss != d* ]] || tag=drop${loss#d}
		id=mtu$mtu/$tag/$name/$(bench_size_label "$size")/q$qps
		;;
	iperf) id=mtu$mtu/iperf3 ;;
	nvme)
		# SIZE in MiB; a lossy one names its loss as the loss cases do.
		tag=
		[ "$loss" = 0 ] || tag=loss$loss/
		[[ $loss != d* ]] || tag=drop${loss#d}/
		id=mtu$mtu/${tag}nvme/${size}M
		# QPS is fio's queue depth (4 KiB random I/O); 1 is dd.
		[ "$qps" = 1 ] || id=$id/qd$qps
		;;
	esac
	echo "$id $kind $mtu $tool $size $qps $loss"
}

_bench_cases_full() {
	local topo=$1 mtu op size

	[ "$topo" != two ] || { _bc iperf 1500 iperf3 0 1; _bc iperf 9000 iperf3 0 1; }
	for mtu in 1500 9000; do
		for op in write read send; do
			for size in 64 4096 65536 1048576; do
				# 64 B messages are one packet at any MTU.
				[ "$mtu" = 1500 ] || [ "$size" != 64 ] || continue
				_bc bw "$mtu" "ib_${op}_bw" "$size" 1
			done
		done
		if [ "$mtu" = 1500 ]; then
			_bc msgrate "$mtu" ib_write_bw 64 1
			_bc msgrate "$mtu" ib_send_bw 64 1
			for op in write read send; do
				_bc bw "$mtu" "ib_${op}_bw" 65536 8
			done
			_bc msgrate "$mtu" ib_write_bw 64 8
			for op in write send read; do
				_bc lat "$mtu" "ib_${op}_lat" 64 1
			done
			if [ "$topo" = two ]; then
				# netem at 0%: what the loss injector costs alone.
				_bc loss "$mtu" ib_write_bw 65536 1 0
				_bc loss "$mtu" ib_write_bw 65536 1 0.1
				_bc loss "$mtu" ib_write_bw 65536 1 1
				_bc loss "$mtu" ib_write_bw 65536 1 5
				# The same 1% from an injector that costs nothing.
				_bc loss "$mtu" ib_write_bw 65536 1 d1
				# A kernel consumer: NVMe-oF, 16 MiB, lossless and at 1%.
				_bc nvme "$mtu" nvme 16 1 0
				_bc nvme "$mtu" nvme 16 1 d1
				# The same with fio: 4 KiB random I/O, 16 in flight.
				_bc nvme "$mtu" nvme 16 16 0
				_bc nvme "$mtu" nvme 16 16 d1
			fi
		else
			_bc bw "$mtu" ib_write_bw 65536 8
		fi
	done
}

_bench_cases_quick() {
	local topo=$1 op

	# The cases the issue sets goals for, one of each kind.
	[ "$topo" != two ] || { _bc iperf 1500 iperf3 0 1; _bc iperf 9000 iperf3 0 1; }
	_bc bw 1500 ib_write_bw 65536 1
	_bc msgrate 1500 ib_write_bw 64 1
	_bc bw 1500 ib_write_bw 65536 8
	_bc lat 1500 ib_write_lat 64 1
	if [ "$topo" = two ]; then
		_bc loss 1500 ib_write_bw 65536 1 0
		_bc loss 1500 ib_write_bw 65536 1 1
		_bc loss 1500 ib_write_bw 65536 1 5
		_bc loss 1500 ib_write_bw 65536 1 d1
	fi
	_bc bw 9000 ib_write_bw 65536 1
}

bench_cases() {
	local topo=$1 line re=${RXE_BENCH_FILTER:-}

	if [ "${RXE_BENCH_QUICK:-0}" = 1 ]; then
		_bench_cases_quick "$topo"
	else
		_bench_cases_full "$topo"
	fi | while read -r line; do
		[ -z "$re" ] || [[ $topo/${line%% *} =~ $re ]] || continue
		echo "$line"
	done
}
