#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest side of bench/run.sh: one boot of one topology in one round.
# Runs the wire's own ceiling (iperf3) once, then, for each driver in
# RXE_BENCH_ORDER (e.g. "ours theirs"), loads it and runs every case of
# bench_cases (lib/cases.sh) against it, per netdev MTU, then unloads it.
# Same kernel, same guests, same wire for both drivers.
#
# Nothing is parsed here beyond what a retry needs: every run leaves its raw
# output and a few key=value files under $RESULTS/$GUEST/runs/, and
# bench/lib/report.py makes the numbers. Per run, named <impl>.<slug>
# (slug: the case ID with / turned into _):
#
#   .client.log / .server.log   the tools' output (the client runs on b with
#                               two guests, on a with one)
#   .info                       (client side) the case, the exact command,
#                               exit status, attempts, perftest's window
#   .server.rc                  (server side) the server's exit status
#   .cpu                        (each guest) busy CPU ticks over a window of
#                               steady traffic, see probe_start
#   .counters                   (each guest) hw_counters that moved
#
# Environment (from bench/run.sh through lib/vm.sh): RXE_BENCH_TOPO (loop,
# two), RXE_BENCH_ORDER, RXE_BENCH_DURATION (perftest -D), RXE_BENCH_MARGIN
# (perftest -f), RXE_BENCH_LAT_ITERS (perftest -n for latency),
# RXE_BENCH_QUICK, RXE_BENCH_FILTER (see lib/cases.sh), RXE_BENCH_DONE (a
# file of "IMPL ID" lines: runs an earlier boot of this round already made,
# skipped here).
#
# The wire: with two guests, after every case both guests ping each other
# and look for a stalled transmit queue (NETDEV WATCHDOG in their kernel
# log): QEMU's emulated NIC sometimes stops taking a guest's packets and
# nothing in the guest restarts it, see docs/performance.md. Then the case just run is moved to runs/wire-lost/,
# the boot ends early with "IMPL ID" in $RESULTS/$GUEST/wire-lost, and
# bench/run.sh boots the pair again for the runs not yet made.
#
# bench/ab.sh's guest side (lib/guest-ab.sh) sources this file for its
# helpers (pair_run, run_again, counters_mark/_save, wire_check, ...):
# sourced, it stops before the boot below.

# It changes the MTU, netem and modules of the machine it runs on: only in
# a test guest, never on the host.
read -r _host 2>/dev/null </proc/sys/kernel/hostname || _host=
if [ "${RESULTS:-}" != /results ] || [[ $_host != rxe-[ab] ]]; then
	echo "guest-bench.sh: runs inside a bench guest only (bench/run.sh starts it)" >&2
	exit 1
fi

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
# shellcheck source=selftests/lib/nvme.sh
. "$REPO/selftests/lib/nvme.sh"
# shellcheck source=bench/lib/cases.sh
. "$REPO/bench/lib/cases.sh"

TOPO=${RXE_BENCH_TOPO:-loop}
D=${RXE_BENCH_DURATION:-4}
M=${RXE_BENCH_MARGIN:-1}
LAT_ITERS=${RXE_BENCH_LAT_ITERS:-5000}
read -r -a ORDER <<<"${RXE_BENCH_ORDER:-ours theirs}"
# Latency runs whose clock calibration failed are run again, up to this.
LAT_ATTEMPTS=3
BW_TIMEOUT=$((D + 60))
LAT_TIMEOUT=180
BARRIER_TIMEOUT=$((BW_TIMEOUT + 120))
CLIENT=a
[ "$TOPO" = loop ] || CLIENT=b
RUNS=$_out/runs
mkdir -p "$RUNS"
HZ=$(getconf CLK_TCK)
NCPU=$(nproc)
PHASELOG=$_out/phases.log
HWC=/sys/class/infiniband/rxe0/ports/1/hw_counters
PATH=$REPO/selftests/bin:$PATH

# The CPU probe's window inside a perftest run of D seconds: it starts
# SETTLE after the first packet and lasts WINDOW (ms), ending well before
# the tools stop sending.
PROBE_SETTLE_MS=$((D * 125))
PROBE_WINDOW_MS=$((D * 625))

ms() {
	printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000))
}

log() {
	echo "$(date +%T) $*" >>"$PHASELOG"
	info "$*"
}

# _busy: this guest's busy CPU time so far, in ticks (USER_HZ): every field
# of /proc/stat's cpu line except idle and iowait (guest time is already in
# user).
_cpu_busy() {
	local u n s q sq st

	read -r _ u n s _ _ q sq st _ </proc/stat
	_busy=$((u + n + s + q + sq + st))
}

# _sum FILE...: the sum of the counters in FILE... (sysfs), in _sum.
_sum() {
	local f v

	_sum=0
	for f in "$@"; do
		v=0
		read -r v 2>/dev/null <"$f" || true
		_sum=$((_sum + v))
	done
}

# probe_start NAME THRESH FILE...: in the background, wait until the sum of
# the counters FILE... has grown by more than THRESH (traffic started), wait
# PROBE_SETTLE_MS, then read the busy CPU ticks of this guest at the start
# and end of PROBE_WINDOW_MS and write them to NAME.cpu. probe_stop stops
# it when the run ended before that (no file then: no CPU number).
probe_start() {
	local name=$1 thresh=$2

	shift 2
	(
		local sum0 deadline t_traffic t0 t1 b0 b1

		_sum "$@"
		sum0=$_sum
		deadline=$((SECONDS + D + 90))
		while :; do
			_sum "$@"
			[ $((_sum - sum0)) -le "$thresh" ] || break
			[ "$SECONDS" -lt "$deadline" ] || exit 0
			nap 0.05
		done
		t_traffic=$EPOCHREALTIME
		nap "$(ms "$PROBE_SETTLE_MS")"
		_cpu_busy
		b0=$_busy t0=$EPOCHREALTIME
		nap "$(ms "$PROBE_WINDOW_MS")"
		_cpu_busy
		b1=$_busy t1=$EPOCHREALTIME
		echo "traffic_start=$t_traffic t0=$t0 t1=$t1 busy0=$b0 busy1=$b1 hz=$HZ ncpu=$NCPU" >"$name.cpu"
	) &
	_probe_pid=$!
}

probe_stop() {
	kill "$_probe_pid" 2>/dev/null || true
	wait "$_probe_pid" 2>/dev/null || true
}

# hw_counters of rxe0 before and after a run: the ones that moved go to
# NAME.counters.
declare -A _hwc0
counters_mark() {
	local f v

	_hwc0=()
	for f in "$HWC"/*; do
		v=0
		read -r v 2>/dev/null <"$f" || true
		_hwc0[${f##*/}]=$v
	done
}

counters_save() {
	local f v n out=

	for f in "$HWC"/*; do
		n=${f##*/}
		v=0
		read -r v 2>/dev/null <"$f" || true
		[ "$v" = "${_hwc0[$n]:-0}" ] || out+="$n=$((v - ${_hwc0[$n]:-0})) "
	done
	echo "$out" >"$1.counters"
}

# --- one server/client run, on one guest or two ------------------------------

# _verdict_file TAG: where the client tells the server guest whether the
# run is repeated.
_verdict_file() {
	echo "$RESULTS/barrier/$1.verdict"
}

# pair_run NAME TAG TIMEOUT PROBE PORT -- SERVER_CMD... -- CLIENT_CMD...
# Run the server on guest a and the client (its last argument, the
# server's IP, is added) on $CLIENT; PROBE (0/1/iperf) starts the CPU probe
# on each guest. Sets _rc (client exit status, 200 when the other guest is
# gone) and leaves NAME.client.log, NAME.server.log, NAME.server.rc.
pair_run() {
	local name=$1 tag=$2 timeout=$3 probe=$4 port=$5 srv=() cli=() spid ip t

	shift 5
	[ "$1" = -- ] && shift
	while [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	cli=("$@")
	_rc=0
	ip=$MY_IP
	[ "$GUEST" = a ] || ip=$PEER_IP

	barrier "$tag-start" || { _rc=200; return 0; }
	case $probe in
	1) probe_start "$name" 0 "$HWC/sent_pkts" "$HWC/rcvd_pkts" ;;
	iperf) probe_start "$name" 1000000 /sys/class/net/eth0/statistics/rx_bytes \
		/sys/class/net/eth0/statistics/tx_bytes ;;
	esac
	if [ "$GUEST" = a ]; then
		timeout -k 5 "$timeout" "${srv[@]}" >"$name.server.log" 2>&1 </dev/null &
		spid=$!
		wait_listen "$port" 30 >>"$name.server.log" 2>&1 || true
	fi
	barrier "$tag-listen" || _rc=200
	if [ "$GUEST" = "$CLIENT" ] && [ "$_rc" = 0 ]; then
		timeout -k 5 "$timeout" "${cli[@]}" "$ip" >"$name.client.log" 2>&1 </dev/null || _rc=$?
		[ "$_rc" != 124 ] || echo "(timed out after ${timeout}s)" >>"$name.client.log"
	fi
	barrier "$tag-client-done" || [ "$GUEST" = "$CLIENT" ] || _rc=200
	if [ "$GUEST" = a ]; then
		# The client is done: the server has a few seconds to finish.
		t=100
		while kill -0 "$spid" 2>/dev/null && [ "$t" -gt 0 ]; do
			nap 0.1
			t=$((t - 1))
		done
		kill "$spid" 2>/dev/null || true
		local src=0
		wait "$spid" 2>/dev/null || src=$?
		echo "$src" >"$name.server.rc"
	fi
	[ "$probe" = 0 ] || probe_stop
	return 0
}

# --- the cases ---------------------------------------------------------------

# lat_ok FILE: perftest's latency row in FILE has numbers for typical (5th
# column) and 99% (8th); inf or nan there means its clock calibration
# failed.
lat_ok() {
	local -a t

	while read -r -a t; do
		if [[ ! ${t[0]:-} =~ ^[0-9]+$ ]] || [ "${#t[@]}" -lt 9 ]; then continue; fi
		[[ ${t[4]} =~ ^[0-9.]+$ ]] && [[ ${t[7]} =~ ^[0-9.]+$ ]] && return 0
	done <"$1"
	return 1
}

# run_again NAME TAG KIND ATTEMPT: after attempt ATTEMPT of a run (pair_run
# NAME TAG), whether to make it again. Latency needs perftest's clock
# (cycles per µs); when its calibration fails (under emulation it sometimes
# does) the numbers are inf or missing: the client guest then keeps the
# attempt's output as NAME.client.attempt<N>.log and asks for another, up
# to LAT_ATTEMPTS, and tells the other guest (a barrier). True: again.
run_again() {
	local name=$1 tag=$2 kind=$3 attempt=$4 verdict='done'

	if [ "$GUEST" = "$CLIENT" ] && [ "$kind" = lat ] && [ "$_rc" = 0 ] &&
		[ "$attempt" -lt "$LAT_ATTEMPTS" ] &&
		! lat_ok "$name.client.log"; then
		verdict=retry
		cp "$name.client.log" "$name.client.attempt$attempt.log"
	fi
	if [ "$NGUESTS" = 2 ]; then
		[ "$GUEST" != "$CLIENT" ] || echo "$verdict" >"$(_verdict_file "$tag")"
		barrier "$tag-verdict" || return 1
		read -r verdict 2>/dev/null <"$(_verdict_file "$tag")" || verdict='done'
	fi
	[ "$verdict" = retry ]
}

_ncase=0

# loss_on LOSS, loss_off LOSS: put a loss case's lossy wire in place on
# this guest, and take it away. LOSS is netem's loss in percent (0 too:
# netem with nothing to drop), or dP: P percent dropped by nftables
# (wire_drop).
loss_on() {
	case $1 in
	d*) wire_drop "${1#d}" >>"$PHASELOG" 2>&1 || log "nft drop ${1#d}% failed on $GUEST" ;;
	*) wire_netem loss "$1%" >>"$PHASELOG" 2>&1 || log "netem loss $1% failed on $GUEST" ;;
	esac
}

loss_off() {
	case $1 in
	d*) wire_drop >>"$PHASELOG" 2>&1 || true ;;
	*) wire_netem >>"$PHASELOG" 2>&1 || true ;;
	esac
}

# --- NVMe-oF over RDMA ----------------------------------------------------------

# A real kernel consumer, set up with selftests/lib/nvme.sh as test 35 is:
# nvmet-rdma exports a memory-backed null_blk on a, b connects with
# nvme-cli (KIND nvme, in bench/ab.sh and bench/run.sh). The export and
# the connection are made and taken down within each run, so that nothing
# holds rxe0 when it is deleted and rdma_rxe removed.

NQN=nqn.2026-11.io.rxe-testbed:bench-nvme
# The limit of each dd of an nvme case. The kernel's rdma_rxe under 1%
# loss took 68 s to write 16 MiB and 89 s to read them (test 35): room
# for that and the host's slower minutes.
NVME_DD_TIMEOUT=240
NVME_PAT=/tmp/bench-nvme.pattern
NVME_BACK=/tmp/bench-nvme.readback

# nvme_prepare MIB: once for the boot, before the first nvme case (MIB:
# the largest). Loads on a nvmet-rdma and a null_blk big enough, kept in
# memory (memory_backed) so that what is read back is what was written;
# on b nvme-rdma. They stay loaded while the drivers change: they hold
# ib_core, not rdma_rxe. The target guest waits at one barrier while the
# host runs both dd: the barriers wait that long.
nvme_prepare() {
	[ "$BARRIER_TIMEOUT" -ge $((2 * NVME_DD_TIMEOUT + 60)) ] ||
		BARRIER_TIMEOUT=$((2 * NVME_DD_TIMEOUT + 60))
	if [ "$GUEST" = a ]; then
		modprobe -a nvmet nvmet-rdma &&
			modprobe null_blk nr_devices=1 memory_backed=1 gb=$((($1 + 1023) / 1024))
	else
		modprobe nvme-rdma
	fi
}

# nvme_gone: wait up to 30 s for the controller to go after a disconnect.
nvme_gone() {
	local left=300

	while nvme_ctrl; do
		[ "$left" -gt 0 ] || { echo "$_ctrl still there 30 s after the disconnect"; return 1; }
		nap 0.1
		left=$((left - 1))
	done
}

# nvme_dd WHAT DD_ARGS...: one timed dd (LC_ALL=C: its summary line is
# parsed). Its own figure of the copy's seconds goes to _dd_s, the wall
# time around it (the process started, under emulation) to _dd_wall.
nvme_dd() {
	local what=$1 rc=0 t0 line

	shift
	_dd_s='' _dd_wall=''
	echo "\$ dd $*"
	t0=${EPOCHREALTIME/./}
	LC_ALL=C timeout -k 5 "$NVME_DD_TIMEOUT" dd "$@" 2>"$NVME_BACK.dd" || rc=$?
	t0=$((${EPOCHREALTIME/./} - t0))
	_dd_wall=$((t0 / 1000000)).$(printf '%06d' $((t0 % 1000000)))
	cat "$NVME_BACK.dd"
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "$what: dd timed out after ${NVME_DD_TIMEOUT}s"
		return "$rc"
	fi
	[ "$rc" = 0 ] || { echo "$what: dd failed (exit $rc)"; return "$rc"; }
	while read -r line; do
		[[ $line =~ copied,\ ([0-9.]+)\ s, ]] && _dd_s=${BASH_REMATCH[1]}
	done <"$NVME_BACK.dd"
	[ -n "$_dd_s" ] || { echo "$what: no 'copied, S s' in dd's output"; return 1; }
}

# nvme_trouble: what the kernel said of nvme since line _nvme_klog of its
# log: a timeout, a reset or a reconnect of the controller is shown (the
# I/O went through, late); an I/O error makes the run fail even where dd
# did not see it (a retry made it good), as in test 35.
nvme_trouble() {
	local lines

	lines=$(nvme_klog_trouble "$_nvme_klog") || return 0
	echo "kernel log:"
	echo "$lines"
	[[ $lines != *'I/O error'* ]] || { echo "nvme: I/O error in the kernel log"; return 1; }
}

# nvme_step TAG OK: both_ok, and _rc=200 when it failed because the other
# guest never answered (not because its step failed).
nvme_step() {
	local peer=a

	[ "$GUEST" = b ] || peer=b
	both_ok "$1" "$2" && return 0
	[ -e "$RESULTS/barrier/$1.ok.$peer" ] || _rc=200
	return 1
}

# nvme_fio WHAT RW QD MIB KEY [KIB]: one timed fio job on /dev/$_disk,
# KIB KiB blocks (default 4; MIB MiB must be a whole number of them) in
# random order at queue depth QD over the first MIB MiB, each block once
# (fio's random map): RW randwrite fills every block with KEY and its own
# offset (and syncs at the end), RW randread reads them back and checks
# each against the same, stopping at the first that differs.
# fio's own figure of the job's seconds (milliseconds from its terse
# output) goes to _dd_s, the wall time around it to _dd_wall, as nvme_dd.
nvme_fio() {
	local what=$1 rw=$2 qd=$3 mib=$4 key=$5 kib=${6:-4} rc=0 t0 ms
	local -a f sync=()

	_dd_s='' _dd_wall=''
	[ "$rw" != randwrite ] || sync=(--end_fsync=1)
	rm -f "$NVME_BACK.fio"
	echo "\$ fio --rw=$rw --bs=${kib}k --iodepth=$qd --ioengine=libaio --direct=1 --size=${mib}M --verify=pattern"
	t0=${EPOCHREALTIME/./}
	LC_ALL=C timeout -k 5 "$NVME_DD_TIMEOUT" fio --name="$what" --filename="/dev/$_disk" \
		--rw="$rw" --bs="${kib}k" --iodepth="$qd" --ioengine=libaio --direct=1 \
		--size="${mib}M" --randrepeat=0 --verify=pattern \
		--verify_pattern="0x$key%o" --verify_fatal=1 --do_verify=0 \
		"${sync[@]}" --output-format=terse --terse-version=3 --output="$NVME_BACK.fio" || rc=$?
	t0=$((${EPOCHREALTIME/./} - t0))
	_dd_wall=$((t0 / 1000000)).$(printf '%06d' $((t0 % 1000000)))
	[ ! -e "$NVME_BACK.fio" ] || cat "$NVME_BACK.fio"
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "$what: fio timed out after ${NVME_DD_TIMEOUT}s"
		return "$rc"
	fi
	[ "$rc" = 0 ] || { echo "$what: fio failed (exit $rc)"; return "$rc"; }
	# Terse version 3: field 5 the job's error, 9 the read runtime in ms,
	# 50 the write runtime.
	IFS=';' read -r -a f <"$NVME_BACK.fio" || true
	[ "${f[4]:-}" = 0 ] || { echo "$what: fio reports error ${f[4]:-(no terse line)}"; return 1; }
	ms=${f[8]:-}
	[ "$rw" != randwrite ] || ms=${f[49]:-}
	[[ $ms =~ ^[1-9][0-9]*$ ]] || { echo "$what: no runtime in fio's terse output"; return 1; }
	_dd_s=$((ms / 1000)).$(printf '%03d' $((ms % 1000)))
}

# nvme_run NAME TAG MIB LOSS KEY [QD [KIB]]: one nvme run on both guests
# (target on a, host on b). a exports nullb0; b connects; LOSS (as
# loss_on) goes on on both guests, as in test 35 after the connection, so
# that rdma_cm's MADs are not what is measured; b writes MIB MiB of a
# pattern under KEY (32 hex digits, new for each run of the boot: a read
# of an earlier run's data cannot pass), drops the page cache and reads
# them back. Without QD (or 0) dd writes them in 1 MiB blocks with
# O_DIRECT and fsync, reads them back with O_DIRECT and compares; with QD,
# fio writes and reads them back in KIB KiB blocks (default 4) in random
# order, QD in flight, each block checked (nvme_fio). LOSS goes off; b
# disconnects; a takes the export down. Sets _rc (b: 0 only when the data
# came back identical; 200: the other guest is gone), _nvme_w and _nvme_r
# (dd's or fio's seconds), _nvme_ww and _nvme_rw (the wall time around
# each) and leaves NAME.client.log (b), NAME.server.log and .server.rc (a)
# and NAME.counters (each guest: what moved while the data did).
nvme_run() {
	local name=$1 tag=$2 mib=$3 loss=$4 key=$5 qd=${6:-0} kib=${7:-4} ok=1 up=0 log rc=1

	_rc=0 _nvme_w='' _nvme_r='' _nvme_ww='' _nvme_rw=''
	log=$name.client.log
	[ "$GUEST" = b ] || log=$name.server.log
	: >"$log"
	counters_mark
	if [ "$GUEST" = a ]; then
		nvmet_up "$MY_IP" >>"$log" 2>&1 || { ok=0; echo "nvmet: exporting nullb0 failed" >>"$log"; }
	elif [ "$qd" = 0 ]; then
		make_pattern "$NVME_PAT" "$mib" "$key" >>"$log" 2>&1 ||
			{ ok=0; echo "making the $mib MiB pattern failed" >>"$log"; }
	fi
	if nvme_step "$tag-nvmet" "$ok"; then
		if [ "$GUEST" = b ]; then
			{
				echo "\$ nvme connect -t rdma -a $PEER_IP -s 4420 -n $NQN (ctrl-loss-tmo 60 s)"
				nvme_connect "$PEER_IP" &&
					nvme_disk && up=1
			} >>"$log" 2>&1 || echo "nvme connect to $PEER_IP failed" >>"$log"
			ok=$up
		fi
		if nvme_step "$tag-connected" "$ok"; then
			[ "$loss" = 0 ] || loss_on "$loss"
			counters_mark
			# Both have the lossy wire in place before the data moves.
			if barrier "$tag-io-start"; then
				if [ "$GUEST" = b ]; then
					# Where the kernel log stands (not a dmesg_mark: that
					# would cut the side's own look for warnings short).
					_nvme_klog=$(dmesg | wc -l)
					if [ "$qd" != 0 ]; then
						nvme_fio write randwrite "$qd" "$mib" "$key" "$kib" &&
							_nvme_w=$_dd_s _nvme_ww=$_dd_wall &&
							echo 3 >/proc/sys/vm/drop_caches &&
							nvme_fio read randread "$qd" "$mib" "$key" "$kib" &&
							_nvme_r=$_dd_s _nvme_rw=$_dd_wall &&
							echo "$mib MiB read back identical (fio: every $kib KiB block)" && rc=0
					else
						nvme_dd write if="$NVME_PAT" of="/dev/$_disk" bs=1M count="$mib" \
							oflag=direct conv=fsync && _nvme_w=$_dd_s _nvme_ww=$_dd_wall &&
							echo 3 >/proc/sys/vm/drop_caches &&
							nvme_dd read if="/dev/$_disk" of="$NVME_BACK" bs=1M count="$mib" \
								iflag=direct && _nvme_r=$_dd_s _nvme_rw=$_dd_wall &&
							{ cmp "$NVME_PAT" "$NVME_BACK" || { echo "compare failed: the data read back differs"; false; }; } &&
							echo "$mib MiB read back identical" && rc=0
					fi >>"$log" 2>&1
					nvme_trouble >>"$log" 2>&1 || rc=1
				fi
				barrier "$tag-io" || [ "$GUEST" = b ] || _rc=200
			else
				_rc=200
			fi
			counters_save "$name"
			[ "$loss" = 0 ] || loss_off "$loss"
		fi
		if [ "$GUEST" = b ] && nvme_ctrl; then
			{
				echo "\$ nvme disconnect -n $NQN"
				timeout -k 5 60 nvme disconnect -n "$NQN" && nvme_gone
			} >>"$log" 2>&1 || { rc=1; echo "nvme disconnect failed" >>"$log"; }
		fi
		[ "$_rc" = 200 ] || barrier "$tag-host-done" || _rc=200
	fi
	[ -e "$name.counters" ] || counters_save "$name"
	if [ "$GUEST" = a ]; then
		nvmet_down >>"$log" 2>&1 || { ok=0; echo "nvmet: taking the export down failed" >>"$log"; }
		echo "$((1 - ok))" >"$name.server.rc"
	else
		rm -f "$NVME_PAT" "$NVME_BACK" "$NVME_BACK.dd" "$NVME_BACK.fio"
		[ "$_rc" = 200 ] || _rc=$rc
	fi
	return 0
}

# run_case IMPL ID KIND MTU TOOL SIZE QPS LOSS: run one case and record it.
run_case() {
	local impl=$1 id=$2 kind=$3 mtu=$4 tool=$5 size=$6 qps=$7 loss=$8
	local name slug tag args=() attempt=0 window=0 rmtu=1024 start qd=0

	slug=${id//\//_}
	name=$RUNS/$impl.$slug
	_ncase=$((_ncase + 1))
	[ "$mtu" -lt 9000 ] || rmtu=4096
	start=$EPOCHREALTIME

	case $kind in
	bw | msgrate | loss)
		args=("$tool" -d rxe0 -x "$GIDX" -F -m "$rmtu" -s "$size" -q "$qps"
			-D "$D" -f "$M" --report_gbits)
		[ "$kind" != msgrate ] || args+=(-l 16 -Q 16)
		window=$((D - 2 * M))
		;;
	lat)
		args=("$tool" -d rxe0 -x "$GIDX" -F -m "$rmtu" -s "$size" -n "$LAT_ITERS")
		;;
	iperf)
		window=$D
		;;
	nvme)
		# What it does, for .info: nvme_run has its own loss window and
		# counters (the data's, not the connection's).
		# QPS is fio's queue depth here; 1 is dd (nvme_run's QD 0).
		[ "$qps" = 1 ] || qd=$qps
		args=(nvme -s "$size")
		[ "$qd" = 0 ] || args+=(-q "$qd")
		;;
	esac

	[ "$kind" != loss ] || loss_on "$loss"
	[ "$kind" = lat ] || [ "$kind" = iperf ] || [ "$kind" = nvme ] || counters_mark
	while :; do
		attempt=$((attempt + 1))
		tag=c$_ncase-$impl-$attempt
		case $kind in
		iperf)
			pair_run "$name" "$tag" "$((D + 60))" iperf 5201 -- \
				iperf3 -s -1 -p 5201 -- \
				iperf3 -J -p 5201 -t "$D" -c
			;;
		lat)
			pair_run "$name" "$tag" "$LAT_TIMEOUT" 0 18515 -- "${args[@]}" -- "${args[@]}"
			;;
		nvme)
			# A pattern of its own for each run of the boot.
			nvme_run "$name" "$tag" "$size" "$loss" "$(printf '%032x' "$_ncase")" "$qd"
			;;
		*)
			pair_run "$name" "$tag" "$BW_TIMEOUT" 1 18515 -- "${args[@]}" -- "${args[@]}"
			;;
		esac
		run_again "$name" "$tag" "$kind" "$attempt" || break
	done
	[ "$kind" = lat ] || [ "$kind" = iperf ] || [ "$kind" = nvme ] || counters_save "$name"
	[ "$kind" != loss ] || loss_off "$loss"
	if [ "$GUEST" = "$CLIENT" ]; then
		{
			echo "impl=$impl"
			echo "id=$id"
			echo "kind=$kind"
			echo "mtu=$mtu"
			echo "roce_mtu=$rmtu"
			echo "tool=$tool"
			echo "size=$size"
			echo "qps=$qps"
			echo "loss=$loss"
			echo "duration=$D"
			echo "margin=$M"
			echo "window=$window"
			echo "lat_iters=$LAT_ITERS"
			echo "attempts=$attempt"
			echo "rc=$_rc"
			echo "elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')"
			echo "cmd=${args[*]:-iperf3 -J -p 5201 -t $D -c <server>}"
			if [ "$kind" = nvme ]; then
				# dd's or fio's own seconds of each copy, and the wall time
				# around it.
				echo "nvme_mib=$size"
				echo "nvme_qd=$qd"
				echo "write_s=$_nvme_w"
				echo "read_s=$_nvme_r"
				echo "write_wall_s=$_nvme_ww"
				echo "read_wall_s=$_nvme_rw"
			fi
		} >"$name.info"
	fi
	[ "$_rc" != 200 ] || return 1
	return 0
}

# skip_case IMPL ID KIND MTU TOOL SIZE QPS LOSS -- WHY: record a case that
# could not run.
skip_case() {
	local impl=$1 id=$2 kind=$3 mtu=$4 tool=$5 size=$6 qps=$7 loss=$8 why=${10}
	local name=$RUNS/$impl.${id//\//_}

	[ "$GUEST" = "$CLIENT" ] || return 0
	printf 'impl=%s\nid=%s\nkind=%s\nmtu=%s\ntool=%s\nsize=%s\nqps=%s\nloss=%s\nrc=skipped\nreason=%s\n' \
		"$impl" "$id" "$kind" "$mtu" "$tool" "$size" "$qps" "$loss" "$why" >"$name.info"
}

# both_ok TAG OK: tell the other guest whether this guest's step worked and
# learn whether its did; true when both did (a barrier).
both_ok() {
	local tag=$1 ok=$2 peer_ok=1 peer

	[ "$NGUESTS" = 2 ] || { [ "$ok" = 1 ]; return; }
	peer=a
	[ "$GUEST" = b ] || peer=b
	echo "$ok" >"$RESULTS/barrier/$tag.ok.$GUEST"
	barrier "$tag" || return 1
	read -r peer_ok 2>/dev/null <"$RESULTS/barrier/$tag.ok.$peer" || peer_ok=0
	[ "$ok" = 1 ] && [ "$peer_ok" = 1 ]
}

set_mtu() {
	ip link set eth0 mtu "$1" >>"$PHASELOG" 2>&1
}

# run_done IMPL ID: an earlier boot of this round made this run.
run_done() {
	[ -n "${RXE_BENCH_DONE:-}" ] && grep -qxF "$1 $2" "$RXE_BENCH_DONE" 2>/dev/null
}

# wire_check TAG: 0 while the wire carries packets both ways, 1 when it
# stopped (the other guest learns it through the barrier), 2 when the other
# guest is gone. A stalled transmit queue shows first as pings that get no
# answer: the watchdog only fires once the ring is full, which light
# traffic (a connection attempt, ACKs) can take minutes to do.
wire_check() {
	local tag=wire-$1 ok=1 g v

	[ "$NGUESTS" = 2 ] || return 0
	! dmesg | grep -q 'NETDEV WATCHDOG' || ok=0
	[ "$ok" = 0 ] || ping -q -n -c 3 -i 0.2 -W 2 "$PEER_IP" >/dev/null 2>&1 || ok=0
	! both_ok "$tag" "$ok" || return 0
	for g in a b; do
		read -r v 2>/dev/null <"$RESULTS/barrier/$tag.ok.$g" || return 2
		[ "$v" = 1 ] || return 1
	done
	return 2
}

# wire_lost IMPL ID: the run of ID just made went over a stalled wire: keep
# its files aside, out of the report, and end the boot.
wire_lost() {
	local f

	mkdir -p "$RUNS/wire-lost"
	for f in "$RUNS/$1.${2//\//_}".*; do
		[ ! -e "$f" ] || mv "$f" "$RUNS/wire-lost/"
	done
	echo "$1 $2" >"$_out/wire-lost"
	log "$1: $2: the wire stopped (no answer to ping or NETDEV WATCHDOG); ending this boot"
	dmesg | grep -m 3 'NETDEV WATCHDOG' >>"$PHASELOG" || true
	ip -s link show eth0 >>"$PHASELOG" 2>&1 || true
}

# --- the boot ----------------------------------------------------------------

# Sourced (lib/guest-ab.sh, bench/ab.sh's guest side): the helpers above
# only.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

# (No process substitution: the guest has no /dev/fd.)
mapfile -t CASES <<<"$(bench_cases "$TOPO")"
[ -n "${CASES[0]}" ] || CASES=()
log "guest $GUEST: topology $TOPO, order ${ORDER[*]}, ${#CASES[@]} cases, -D $D -f $M, lat -n $LAT_ITERS"
# What this guest is (package versions and module hashes are taken on the
# host: the guest runs the host's root file system).
read -r _kver </proc/sys/kernel/osrelease
printf 'kernel=%s\nncpu=%s\nhz=%s\n' "$_kver" "$NCPU" "$HZ" >"$_out/guest.info"

MTUS=()
for c in "${CASES[@]}"; do
	read -r _ kind mtu _ <<<"$c"
	[ "$kind" != iperf ] || continue
	[[ " ${MTUS[*]} " == *" $mtu "* ]] || MTUS+=("$mtu")
done
if [ "$TOPO" = two ]; then
	modprobe sch_netem >>"$PHASELOG" 2>&1 || log "modprobe sch_netem failed"
fi
nvme_mib=0
for c in "${CASES[@]}"; do
	read -r _ kind _ _ size _ <<<"$c"
	[ "$kind" != nvme ] || [ "$size" -le "$nvme_mib" ] || nvme_mib=$size
done
if [ "$nvme_mib" != 0 ]; then
	nvme_prepare "$nvme_mib" >>"$PHASELOG" 2>&1 || log "loading the nvme modules failed on $GUEST"
fi

# The wire's ceiling, once per boot, before any driver is loaded.
for c in "${CASES[@]}"; do
	read -r id kind mtu tool size qps loss <<<"$c"
	[ "$kind" = iperf ] || continue
	! run_done wire "$id" || continue
	set_mtu "$mtu" || log "ip link set eth0 mtu $mtu failed"
	barrier "iperf-mtu-$mtu" || break
	log "wire: $id"
	run_case wire "$id" "$kind" "$mtu" "$tool" "$size" "$qps" "$loss" || break
	wire=0
	wire_check "$_ncase" || wire=$?
	[ "$wire" != 1 ] || wire_lost wire "$id"
	[ "$wire" = 0 ] || break
done
set_mtu 1500 || true

peer_gone=0
[ ! -e "$_out/wire-lost" ] || peer_gone=1
for impl in "${ORDER[@]}"; do
	[ "$peer_gone" = 0 ] || break
	todo=0
	for c in "${CASES[@]}"; do
		read -r id kind _ <<<"$c"
		[ "$kind" = iperf ] || run_done "$impl" "$id" || todo=1
	done
	if [ "$todo" = 0 ]; then
		log "$impl: every run made in an earlier boot"
		continue
	fi
	log "$impl: loading"
	dmesg_mark "bench $impl"
	ok=1
	load_rxe "$impl" >>"$PHASELOG" 2>&1 || ok=0
	loaded_ok=$ok
	for mtu in "${MTUS[@]}"; do
		todo=0
		for c in "${CASES[@]}"; do
			read -r id kind cmtu _ <<<"$c"
			[ "$kind" = iperf ] || [ "$cmtu" != "$mtu" ] || run_done "$impl" "$id" || todo=1
		done
		[ "$todo" = 1 ] || continue
		ok=$loaded_ok
		why="load_rxe $impl failed"
		if [ "$ok" = 1 ]; then
			why="ip link set eth0 mtu $mtu / rdma link add failed"
			set_mtu "$mtu" || ok=0
			[ "$ok" = 0 ] || rxe_add rxe0 eth0 >>"$PHASELOG" 2>&1 || ok=0
			[ "$ok" = 0 ] || GIDX=$(gid_index "$MY_IP")
			[ -n "${GIDX:-}" ] || ok=0
		fi
		if ! both_ok "up-$impl-$mtu" "$ok"; then
			[ -e "$RESULTS/barrier/up-$impl-$mtu.ok.a" ] && [ -e "$RESULTS/barrier/up-$impl-$mtu.ok.b" ] ||
				[ "$NGUESTS" = 1 ] || { peer_gone=1; why="the other guest is gone"; }
			[ "$ok" = 0 ] || why="setup failed on the other guest"
			log "$impl mtu $mtu: $why: its cases are recorded as failed"
			for c in "${CASES[@]}"; do
				read -r id kind cmtu tool size qps loss <<<"$c"
				if [ "$kind" = iperf ] || [ "$cmtu" != "$mtu" ]; then continue; fi
				run_done "$impl" "$id" ||
					skip_case "$impl" "$id" "$kind" "$cmtu" "$tool" "$size" "$qps" "$loss" -- "$why"
			done
			rdma link delete rxe0 >>"$PHASELOG" 2>&1 || true
			[ "$peer_gone" = 0 ] || break
			continue
		fi
		log "$impl mtu $mtu: rxe0 up ($(modinfo_loaded)), GID index $GIDX"
		for c in "${CASES[@]}"; do
			read -r id kind cmtu tool size qps loss <<<"$c"
			if [ "$kind" = iperf ] || [ "$cmtu" != "$mtu" ]; then continue; fi
			! run_done "$impl" "$id" || continue
			if ! run_case "$impl" "$id" "$kind" "$cmtu" "$tool" "$size" "$qps" "$loss"; then
				log "$impl: $id: the other guest is gone"
				peer_gone=1
				break
			fi
			wire=0
			wire_check "$_ncase" || wire=$?
			[ "$wire" != 1 ] || wire_lost "$impl" "$id"
			if [ "$wire" != 0 ]; then
				peer_gone=1
				break
			fi
		done
		rxe_del rxe0 >>"$PHASELOG" 2>&1 || log "$impl: rdma link delete rxe0 failed"
		[ "$peer_gone" = 0 ] || break
	done
	_dmesg_bad_lines >"$_out/dmesg-bad-$impl.log" 2>&1 || true
	log "$impl: unloading"
	if [ -d /sys/module/rdma_rxe ]; then
		timeout 60 rmmod rdma_rxe >>"$PHASELOG" 2>&1 || log "$impl: rmmod rdma_rxe failed"
	fi
	set_mtu 1500 || true
	barrier "done-$impl" || peer_gone=1
done

log "guest $GUEST: done"
# The end, with status 0 (no `exit` here: shellcheck would take it for
# the end of lib/guest-ab.sh too, which sources this file).
_finished=1
