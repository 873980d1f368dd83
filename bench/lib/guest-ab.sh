#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest side of bench/ab.sh: two builds of rdma_rxe (sides A and B) in
# one boot of the same guests. For each round, the side that goes first
# (A in odd rounds, B in even ones) is loaded, rxe0 added on eth0, every
# case run once, rxe0 deleted and the module removed; then the other side.
# The netdev MTU is set once, before the first round.
#
# Runs are made as bench/run.sh makes them, with the helpers of
# lib/guest-bench.sh (sourced): the server on guest a, the client on b (one
# guest: both on a, over its own IP), fork-free waits, the hw_counters
# that moved on each guest, a latency run repeated while perftest's clock
# calibration fails, netem loss on what each guest receives for a loss
# case, and after each case the wire guard (both guests ping each other;
# on a stalled wire the boot ends, with "r<N> <SIDE> c<K>" in
# $RESULTS/$GUEST/wire-lost). Nothing is judged here: per run, named
# r<round>.<side>.c<case>, $RESULTS/$GUEST/runs/ holds what
# lib/guest-bench.sh describes (.client.log, .server.log, .server.rc,
# .info, .counters, .cpu), and per round and side .params (the loaded
# module's srcversion and parameters); bench/lib/ab_report.py makes the
# numbers.
#
# Environment (from bench/ab.sh through lib/vm.sh):
#   RXE_AB_ROUNDS         rounds
#   RXE_AB_MTU            netdev MTU: 1500 (RoCE MTU 1024) or 9000 (4096)
#   RXE_AB_KO_A/_B        each side's module as the guest sees it, or theirs
#   RXE_AB_PARAMS_A/_B    its module parameters (words: name=value)
#   RXE_AB_LABEL_A/_B     its name in the progress lines
#   RXE_AB_CASES          the cases, one a line: KIND LOSS PORT TOOL ARGS...
#                         (KIND bw, lat or nvme; LOSS a netem loss in % or
#                         0, dP a random drop of P% by nftables)
#
# A case of KIND nvme ("nvme 0 4420 nvme -s MIB") is NVMe-oF over RDMA, as
# selftests/tests/35-nvme-rdma.sh sets it up but with the bench's sides:
# guest a exports a memory-backed null_blk through nvmet-rdma, b connects
# with nvme-cli, writes MIB MiB of a pattern with O_DIRECT, reads them back
# and compares (ab_nvme). The nvme modules are loaded once for the boot;
# the export and the connection are made and taken down within each run,
# so that nothing holds rxe0 when it is deleted and rdma_rxe removed.
#   RXE_BENCH_TOPO, RXE_BENCH_DURATION, RXE_BENCH_MARGIN  as for guest-bench.sh

# shellcheck source=bench/lib/guest-bench.sh
. "$REPO/bench/lib/guest-bench.sh"

ROUNDS=${RXE_AB_ROUNDS:-5}
MTU=${RXE_AB_MTU:-1500}
RMTU=1024
[ "$MTU" -lt 9000 ] || RMTU=4096
declare -A KO=([A]=$RXE_AB_KO_A [B]=$RXE_AB_KO_B)
declare -A PARAMS=([A]=${RXE_AB_PARAMS_A:-} [B]=${RXE_AB_PARAMS_B:-})
declare -A LABEL=([A]=${RXE_AB_LABEL_A:-A} [B]=${RXE_AB_LABEL_B:-B})
mapfile -t ABCASES <<<"$RXE_AB_CASES"
MODPARAMS=/sys/module/rdma_rxe/parameters

NQN=nqn.2026-11.io.rxe-testbed:ab-nvme
NVMET_SUBSYS=/sys/kernel/config/nvmet/subsystems/$NQN
NVMET_PORT=/sys/kernel/config/nvmet/ports/1
# The limit of each dd of an nvme case. The kernel's rdma_rxe under 1%
# loss took 68 s to write 16 MiB and 89 s to read them (test 35): room
# for that and the host's slower minutes.
NVME_DD_TIMEOUT=240
NVME_PAT=/tmp/ab-nvme.pattern
NVME_BACK=/tmp/ab-nvme.readback
NVME_MIB=0
for c in "${ABCASES[@]}"; do
	read -r -a w <<<"$c"
	[ "${w[0]}" != nvme ] || [ "${w[5]}" -le "$NVME_MIB" ] || NVME_MIB=${w[5]}
done
# The target guest waits at one barrier while the host runs both dd.
[ "$NVME_MIB" = 0 ] || [ "$BARRIER_TIMEOUT" -ge $((2 * NVME_DD_TIMEOUT + 60)) ] ||
	BARRIER_TIMEOUT=$((2 * NVME_DD_TIMEOUT + 60))

# plog TEXT: only to phases.log; log (guest-bench.sh) also prints it.
plog() {
	echo "$(date +%T) $*" >>"$PHASELOG"
}

# ab_load SIDE: load the side's module (lib/guest.sh's load_rxe) and
# record what was loaded in runs/r<N>.<SIDE>.params.
ab_load() {
	local side=$1 f v

	if [ "${KO[$side]}" = theirs ]; then
		load_rxe theirs || return 1
	else
		RXE_KO=${KO[$side]} RXE_PARAMS=${PARAMS[$side]} load_rxe ours || return 1
	fi
	{
		echo "ko=${KO[$side]}"
		echo "params=${PARAMS[$side]}"
		echo "loaded=$(modinfo_loaded)"
		v=
		read -r v 2>/dev/null </sys/module/rdma_rxe/srcversion || true
		echo "srcversion=$v"
		for f in "$MODPARAMS"/*; do
			[ -e "$f" ] || continue
			v=
			read -r v 2>/dev/null <"$f" || true
			echo "param.${f##*/}=$v"
		done
	} >"$RUNS/r$round.$side.params"
}

# ab_params SIDE: say what each parameter asked for reads in sysfs now.
ab_params() {
	local p v

	# shellcheck disable=SC2086 # words: one parameter each
	for p in ${PARAMS[$1]}; do
		v='(not in sysfs)'
		read -r v 2>/dev/null <"$MODPARAMS/${p%%=*}" || true
		log "r$round $1: parameter ${p%%=*}: asked ${p#*=}, $MODPARAMS/${p%%=*} reads $v"
	done
}

# hwc_names: the hw_counters rxe0 has, for the report to tell a counter
# that did not move from one the driver does not have.
hwc_names() {
	local f names=

	for f in "$HWC"/*; do
		[ ! -e "$f" ] || names+=" ${f##*/}"
	done
	echo "counters=${names# }"
}

# run_summary NAME KIND WINDOW: a short result for the progress line, in
# _summary (bench/lib/ab_report.py makes the numbers that count).
run_summary() {
	local name=$1 kind=$2 window=$3 hdr=0 v
	local -a t

	_summary="failed: exit $_rc"
	[ "$_rc" = 0 ] || return 0
	if [ "$kind" = nvme ]; then
		_summary="write $(mbps "$_nvme_mib" "$_nvme_w") MB/s, read $(mbps "$_nvme_mib" "$_nvme_r") MB/s (dd: $_nvme_w s, $_nvme_r s), identical"
		return 0
	fi
	_summary='no result row'
	while read -r -a t; do
		case " ${t[*]} " in
		*' Failed status '*) _summary="QP error: ${t[*]}"; return 0 ;;
		*' #bytes '*) hdr=1; continue ;;
		esac
		if [ "$hdr" = 0 ] || [[ ! ${t[0]:-} =~ ^[0-9]+$ ]] || [[ ! ${t[1]:-} =~ ^[0-9]+$ ]]; then
			continue
		fi
		if [ "$kind" = lat ]; then
			_summary="t_typical ${t[4]:-?} us, p99 ${t[7]:-?} us"
		elif [ "$window" -gt 0 ]; then
			v=$((t[0] * t[1] * 10 / (window * 1000000)))
			_summary="$((v / 10)).$((v % 10)) MB/s, ${t[1]} messages"
		fi
	done <"$name.client.log"
}

# --- NVMe-oF over RDMA ---------------------------------------------------------

# nvme_modules: load, once for the boot, what the nvme cases use: on a
# nvmet-rdma and a null_blk big enough for the largest case, kept in
# memory (memory_backed) so that what is read back is what was written;
# on b nvme-rdma. Both stay loaded across the sides: they hold ib_core,
# not rdma_rxe.
nvme_modules() {
	if [ "$GUEST" = a ]; then
		modprobe -a nvmet nvmet-rdma &&
			modprobe null_blk nr_devices=1 memory_backed=1 gb=$(((NVME_MIB + 1023) / 1024))
	else
		modprobe nvme-rdma
	fi
}

# nvmet_up / nvmet_down: export nullb0 as $NQN on rdma $MY_IP:4420, and
# take the export down (configfs), as test 35 does.
nvmet_up() {
	mkdir "$NVMET_SUBSYS" &&
		echo 1 >"$NVMET_SUBSYS/attr_allow_any_host" &&
		mkdir "$NVMET_SUBSYS/namespaces/1" &&
		echo -n /dev/nullb0 >"$NVMET_SUBSYS/namespaces/1/device_path" &&
		echo 1 >"$NVMET_SUBSYS/namespaces/1/enable" &&
		mkdir "$NVMET_PORT" &&
		echo rdma >"$NVMET_PORT/addr_trtype" &&
		echo ipv4 >"$NVMET_PORT/addr_adrfam" &&
		echo "$MY_IP" >"$NVMET_PORT/addr_traddr" &&
		echo 4420 >"$NVMET_PORT/addr_trsvcid" &&
		ln -s "$NVMET_SUBSYS" "$NVMET_PORT/subsystems/$NQN"
}

# Whatever of the export is there (a failed nvmet_up leaves part of it).
nvmet_down() {
	local rc=0

	[ ! -L "$NVMET_PORT/subsystems/$NQN" ] || rm -f "$NVMET_PORT/subsystems/$NQN" || rc=1
	[ ! -d "$NVMET_PORT" ] || rmdir "$NVMET_PORT" || rc=1
	if [ -d "$NVMET_SUBSYS/namespaces/1" ]; then
		echo 0 >"$NVMET_SUBSYS/namespaces/1/enable" || rc=1
		rmdir "$NVMET_SUBSYS/namespaces/1" || rc=1
	fi
	[ ! -d "$NVMET_SUBSYS" ] || rmdir "$NVMET_SUBSYS" || rc=1
	return "$rc"
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
# in _disk. With native multipath the disk hangs off the subsystem and the
# controller only has a hidden path (nvme0c0n1), as test 35 found.
nvme_disk() {
	local d n q left=100

	_disk=
	while [ "$left" -gt 0 ]; do
		for d in /sys/class/nvme-subsystem/nvme-subsys* /sys/class/nvme/nvme*; do
			read -r q 2>/dev/null <"$d/subsysnqn" || continue
			[ "$q" = "$NQN" ] || continue
			for n in "$d"/nvme*n*; do
				n=${n##*/}
				[ ! -b "/dev/$n" ] || { _disk=$n; return 0; }
			done
		done
		nap 0.1
		left=$((left - 1))
	done
	echo "no namespace of $NQN appeared in /dev in 10 s"
	return 1
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

# mbps MIB S: MIB MiB in S seconds, in MB/s with one decimal.
mbps() {
	awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", (s > 0 ? b * 1048576 / s / 1e6 : 0) }'
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

# ab_nvme NAME TAG MIB LOSS: one nvme run on both guests. a exports
# nullb0; b connects; LOSS goes on (both guests, as test 35: after the
# connection, so that rdma_cm's MADs are not what is measured); b writes
# MIB MiB of a pattern new to this run (a read of an earlier run's data
# cannot pass) with O_DIRECT and fsync, drops the page cache, reads them
# back with O_DIRECT and compares; LOSS goes off; b disconnects; a takes
# the export down. Sets _rc (b: 0 only when the data came back identical;
# 200: the other guest is gone), _nvme_w and _nvme_r (dd's seconds) and
# leaves NAME.client.log (b), NAME.server.log and .server.rc (a).
ab_nvme() {
	local name=$1 tag=$2 mib=$3 loss=$4 ok=1 up=0 log rc=1 key

	_rc=0 _nvme_w='' _nvme_r='' _nvme_ww='' _nvme_rw=''
	log=$name.client.log
	[ "$GUEST" = b ] || log=$name.server.log
	: >"$log"
	counters_mark
	if [ "$GUEST" = a ]; then
		nvmet_up >>"$log" 2>&1 || { ok=0; echo "nvmet: exporting nullb0 failed" >>"$log"; }
	else
		# A key of its own for each run: round, side and case.
		key=$(printf '%08x%08x%016x' "$round" "'${side}" "$k")
		make_pattern "$NVME_PAT" "$mib" "$key" >>"$log" 2>&1 ||
			{ ok=0; echo "making the $mib MiB pattern failed" >>"$log"; }
	fi
	if nvme_step "$tag-nvmet" "$ok"; then
		if [ "$GUEST" = b ]; then
			{
				echo "\$ nvme connect -t rdma -a $PEER_IP -s 4420 -n $NQN"
				timeout -k 5 60 nvme connect -t rdma -a "$PEER_IP" -s 4420 -n "$NQN" &&
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
					{
						nvme_dd write if="$NVME_PAT" of="/dev/$_disk" bs=1M count="$mib" \
							oflag=direct conv=fsync && _nvme_w=$_dd_s _nvme_ww=$_dd_wall &&
							echo 3 >/proc/sys/vm/drop_caches &&
							nvme_dd read if="/dev/$_disk" of="$NVME_BACK" bs=1M count="$mib" \
								iflag=direct && _nvme_r=$_dd_s _nvme_rw=$_dd_wall &&
							{ cmp "$NVME_PAT" "$NVME_BACK" || { echo "compare failed: the data read back differs"; false; }; } &&
							echo "$mib MiB read back identical" && rc=0
					} >>"$log" 2>&1
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
		rm -f "$NVME_PAT" "$NVME_BACK" "$NVME_BACK.dd"
		[ "$_rc" = 200 ] || _rc=$rc
	fi
	return 0
}

# ab_run SIDE K: run case K once for SIDE in this round and record it.
# Returns 1 when the other guest is gone.
ab_run() {
	local side=$1 k=$2 kind loss port name tag attempt=0 window=0 probe=0 limit t0 us
	local more=
	local -a w cmd

	read -r -a w <<<"${ABCASES[k - 1]}"
	kind=${w[0]} loss=${w[1]} port=${w[2]}
	cmd=("${w[3]}" -d rxe0 -x "$GIDX" -F -m "$RMTU")
	limit=$LAT_TIMEOUT
	if [ "$kind" = nvme ]; then
		cmd=("${w[3]}")
	elif [ "$kind" = bw ]; then
		cmd+=(-D "$D" -f "$M")
		window=$((D - 2 * M))
		limit=$BW_TIMEOUT
		# The CPU probe (CPU s/GiB), as the bench.
		probe=1
	fi
	cmd+=("${w[@]:4}")
	name=$RUNS/r$round.$side.c$k
	t0=${EPOCHREALTIME/./}

	if [ "$kind" = nvme ]; then
		# Its own loss window and counters: the data's, not the connection's.
		attempt=1
		ab_nvme "$name" "r$round-$side-c$k-1" "${w[5]}" "$loss"
	else
		[ "$loss" = 0 ] || loss_on "$loss"
		while :; do
			attempt=$((attempt + 1))
			tag=r$round-$side-c$k-$attempt
			# The counters of the attempt that counts: the last.
			counters_mark
			pair_run "$name" "$tag" "$limit" "$probe" "$port" -- "${cmd[@]}" -- "${cmd[@]}"
			run_again "$name" "$tag" "$kind" "$attempt" || break
		done
		counters_save "$name"
		[ "$loss" = 0 ] || loss_off "$loss"
	fi
	if [ "$GUEST" = "$CLIENT" ]; then
		us=$((${EPOCHREALTIME/./} - t0))
		{
			echo "round=$round"
			echo "side=$side"
			echo "case=$k"
			echo "kind=$kind"
			echo "loss=$loss"
			echo "mtu=$MTU"
			echo "roce_mtu=$RMTU"
			echo "duration=$D"
			echo "margin=$M"
			echo "window=$window"
			echo "attempts=$attempt"
			echo "rc=$_rc"
			printf 'elapsed=%d.%02d\n' $((us / 1000000)) $((us / 10000 % 100))
			echo "cmd=${cmd[*]}"
			if [ "$kind" = nvme ]; then
				# dd's own seconds of each copy, and the wall time around it.
				echo "nvme_mib=${w[5]}"
				echo "write_s=$_nvme_w"
				echo "read_s=$_nvme_r"
				echo "write_wall_s=$_nvme_ww"
				echo "read_wall_s=$_nvme_rw"
			fi
		} >"$name.info"
		_nvme_mib=${w[5]:-0}
		run_summary "$name" "$kind" "$window"
		[ "$attempt" = 1 ] || more=", $attempt attempts"
		# The case as given: [loss=P% | drop=P%] TOOL ARGS.
		w[2]=loss=$loss%
		[[ $loss != d* ]] || w[2]=drop=${loss#d}%
		[ "$loss" != 0 ] || w=("${w[@]:1}")
		log "r$round $side (${LABEL[$side]}) c$k ${w[*]:2}: $_summary ($((us / 1000000)) s$more)"
	fi
	[ "$_rc" != 200 ] || return 1
	return 0
}

# skip_cases SIDE WHY: record every case of SIDE in this round as not run.
skip_cases() {
	local k

	[ "$GUEST" = "$CLIENT" ] || return 0
	for k in "${!ABCASES[@]}"; do
		printf 'round=%s\nside=%s\ncase=%s\nrc=skipped\nreason=%s\n' \
			"$round" "$1" "$((k + 1))" "$2" >"$RUNS/r$round.$1.c$((k + 1)).info"
	done
}

# ab_side SIDE: one side's turn in this round. Returns 1 when the boot
# must end (the other guest is gone, or the wire stopped).
ab_side() {
	local side=$1 ok=1 why k wire rc=0

	# Guest a tells the host; b only its phases.log.
	if [ "$GUEST" = a ]; then
		log "r$round $side (${LABEL[$side]}): loading ${KO[$side]}${PARAMS[$side]:+ ${PARAMS[$side]}}"
	else
		plog "r$round $side (${LABEL[$side]}): loading ${KO[$side]}${PARAMS[$side]:+ ${PARAMS[$side]}}"
	fi
	dmesg_mark "ab r$round $side"
	ab_load "$side" >>"$PHASELOG" 2>&1 || ok=0
	[ "$ok" = 0 ] || ab_params "$side"
	why="rdma link add rxe0 failed"
	[ "$ok" = 1 ] || why="loading ${KO[$side]} failed"
	[ "$ok" = 0 ] || rxe_add rxe0 eth0 >>"$PHASELOG" 2>&1 || ok=0
	GIDX=
	[ "$ok" = 0 ] || GIDX=$(gid_index "$MY_IP")
	[ -n "${GIDX:-}" ] || ok=0
	[ "$ok" = 0 ] || hwc_names >>"$RUNS/r$round.$side.params"
	if both_ok "up-r$round-$side" "$ok"; then
		for k in "${!ABCASES[@]}"; do
			k=$((k + 1))
			if ! ab_run "$side" "$k"; then
				log "r$round $side c$k: the other guest is gone"
				rc=1
				break
			fi
			wire=0
			wire_check "r$round-$side-c$k" || wire=$?
			if [ "$wire" = 1 ]; then
				echo "r$round $side c$k" >"$_out/wire-lost"
				log "r$round $side c$k: the wire stopped (no answer to ping or NETDEV WATCHDOG); ending this boot"
				dmesg | grep -m 3 'NETDEV WATCHDOG' >>"$PHASELOG" || true
				ip -s link show eth0 >>"$PHASELOG" 2>&1 || true
			fi
			if [ "$wire" != 0 ]; then
				rc=1
				break
			fi
		done
	else
		if [ "$NGUESTS" = 2 ] && { [ ! -e "$RESULTS/barrier/up-r$round-$side.ok.a" ] ||
			[ ! -e "$RESULTS/barrier/up-r$round-$side.ok.b" ]; }; then
			why="the other guest is gone"
			rc=1
		elif [ "$ok" = 1 ]; then
			why="setup failed on the other guest"
		fi
		log "r$round $side (${LABEL[$side]}): $why: its cases are recorded as not run"
		skip_cases "$side" "$why"
	fi
	rdma link delete rxe0 >>"$PHASELOG" 2>&1 || true
	_dmesg_bad_lines >"$_out/dmesg-bad-r$round-$side.log" 2>&1 || true
	if [ -d /sys/module/rdma_rxe ]; then
		timeout 60 rmmod rdma_rxe >>"$PHASELOG" 2>&1 || log "r$round $side: rmmod rdma_rxe failed"
	fi
	[ "$rc" = 1 ] || barrier "done-r$round-$side" || rc=1
	return "$rc"
}

log "guest $GUEST: $TOPO, $ROUNDS round(s), ${#ABCASES[@]} case(s), MTU $MTU, -D $D -f $M"
read -r _kver </proc/sys/kernel/osrelease
printf 'kernel=%s\nncpu=%s\nhz=%s\n' "$_kver" "$NCPU" "$HZ" >"$_out/guest.info"
set_mtu "$MTU" || log "ip link set eth0 mtu $MTU failed"
if [ "$NVME_MIB" != 0 ]; then
	nvme_modules >>"$PHASELOG" 2>&1 || log "loading the nvme modules failed on $GUEST"
fi
for ((round = 1; round <= ROUNDS; round++)); do
	order=(A B)
	[ $((round % 2)) = 1 ] || order=(B A)
	gone=0
	for side in "${order[@]}"; do
		ab_side "$side" || { gone=1; break; }
	done
	[ "$gone" = 0 ] || break
done

log "guest $GUEST: done"
_finished=1
exit 0
