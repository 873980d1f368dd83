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
# A case of KIND nvme ("nvme 0 4420 nvme -s MIB [-q QD [-b KIB]]", in
# that order: bench/ab.sh prints it so) is NVMe-oF over RDMA, as
# selftests/tests/35-nvme-rdma.sh sets it up but with the bench's sides:
# guest a exports a memory-backed null_blk through nvmet-rdma, b connects
# with nvme-cli, writes MIB MiB of a pattern with O_DIRECT, reads them
# back and compares: with dd in 1 MiB blocks, or with -q with fio in KIB
# KiB blocks (default 4) in random order, QD in flight (nvme_run,
# lib/guest-bench.sh). The nvme modules are loaded once for the boot; the
# export and the connection are made and taken down within each run, so
# that nothing holds rxe0 when it is deleted and rdma_rxe removed.
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
# The largest nvme case, in MiB (0: none): nvme_prepare sizes null_blk.
NVME_MIB=0
for c in "${ABCASES[@]}"; do
	read -r -a w <<<"$c"
	[ "${w[0]}" != nvme ] || [ "${w[5]}" -le "$NVME_MIB" ] || NVME_MIB=${w[5]}
done

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
		if [ "$_nvme_qd" != 0 ]; then
			_summary="write $(mbps "$_nvme_mib" "$_nvme_w") MB/s ($(iops "$_nvme_mib" "$_nvme_w" "$_nvme_kib") IOPS), read $(mbps "$_nvme_mib" "$_nvme_r") MB/s ($(iops "$_nvme_mib" "$_nvme_r" "$_nvme_kib") IOPS) (fio: $_nvme_w s, $_nvme_r s), identical"
			return 0
		fi
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

# mbps MIB S: MIB MiB in S seconds, in MB/s with one decimal.
mbps() {
	awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", (s > 0 ? b * 1048576 / s / 1e6 : 0) }'
}

# iops MIB S KIB: MIB MiB of KIB KiB I/Os in S seconds, per second.
iops() {
	awk -v b="$1" -v s="$2" -v k="$3" 'BEGIN { printf "%.0f", (s > 0 ? b * 1024 / k / s : 0) }'
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
		# A pattern of its own for each run: round, side and case.
		nvme_run "$name" "r$round-$side-c$k-1" "${w[5]}" "$loss" \
			"$(printf '%08x%08x%016x' "$round" "'$side" "$k")" "${w[7]:-0}" "${w[9]:-4}"
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
				# dd's or fio's own seconds of each copy, and the wall time
				# around it.
				echo "nvme_mib=${w[5]}"
				echo "nvme_qd=${w[7]:-0}"
				# fio's block size in KiB (dd's is 1 MiB).
				[ -z "${w[7]:-}" ] || echo "nvme_bs_kib=${w[9]:-4}"
				echo "write_s=$_nvme_w"
				echo "read_s=$_nvme_r"
				echo "write_wall_s=$_nvme_ww"
				echo "read_wall_s=$_nvme_rw"
			fi
		} >"$name.info"
		_nvme_mib=${w[5]:-0}
		_nvme_qd=${w[7]:-0}
		_nvme_kib=${w[9]:-4}
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
	nvme_prepare "$NVME_MIB" >>"$PHASELOG" 2>&1 || log "loading the nvme modules failed on $GUEST"
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
