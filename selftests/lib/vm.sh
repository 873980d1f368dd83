# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Boot one or two QEMU guests that each run a test script. Source it after
# common.sh and kernel.sh (kernel_prepare must have run), install
# `trap vm_cleanup EXIT` and call
#
#   vm_run OUT NGUESTS TIMEOUT SCRIPT
#
# which leaves, for each guest g in a (and b):
#
#   OUT/g/console.log  serial console: kernel log and the test's output
#   OUT/g/test.log     the test's stdout and stderr
#   OUT/g/checks.log   the full output of every check (lib/guest.sh)
#   OUT/g/failed       descriptions of the failed checks, one a line
#   OUT/g/dmesg.log    the kernel log at the end of the test
#   OUT/g/status       the test's exit status (1 if a host check failed)
#   OUT/g/host-checks  the checks the guest left for the host (host_check),
#                      which vm_run runs once the guests are off
#   OUT/g/qemu.log     QEMU's own messages
#
# returns 0 when every guest's script exited 0, and otherwise sets
# VM_REASON to a one-line reason, and VM_BOOT_FAILED to the guests that
# never began their test script (a kernel that panicked while booting:
# under TCG one now and then does, before anything of the test ran). The
# guests' network is one Ethernet link (QEMU dgram netdevs on 127.0.0.1
# pointing at each other); guest a is 10.11.0.1 / fd11::1, guest b
# 10.11.0.2 / fd11::2.
#
# Environment:
#   RXE_VM_ACCEL   tcg (default) or kvm
#   RXE_VM_SMP     vCPUs per guest (default 2 for one guest, 1 for two);
#                  one vCPU under TCG boots as 1,maxcpus=2 (see vm_smp)
#   RXE_VM_MEM     memory per guest (default 2G)
#   RXE_VM_SHELL=1 interactive shell on the console instead of the test
#                  (one guest; Ctrl-a x quits QEMU)
#   RXE_VM_NIC     extra virtio-net-pci properties (e.g. event_idx=off)
#   RXE_VM_APPEND  extra guest kernel command line (e.g. init_on_alloc=0)
#   RXE_VM_PLUGIN  a QEMU TCG plugin (with its arguments) to load into each
#                  guest; out=<the guest's results share> is added (the
#                  profiler, bench/prof/)
#   VM_FOLLOW=1    print the guests' test output to the terminal as it comes
#   RXE_*          every other RXE_ variable is passed to the test

VM_PIDS=()
VM_TAILS=()
VM_CMD=()
VM_TMP=
VM_REASON=
VM_BOOT_FAILED=

vm_cleanup() {
	local pid

	for pid in "${VM_PIDS[@]}"; do
		kill "$pid" 2>/dev/null || continue
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		kill -9 "$pid" 2>/dev/null
	done
	VM_PIDS=()
	for pid in "${VM_TAILS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	VM_TAILS=()
	[ -z "$VM_TMP" ] || rm -rf "$VM_TMP"
	VM_TMP=
}

# Print two free UDP ports on 127.0.0.1, next to each other. Derived from
# our PID so that parallel runs in other checkouts start elsewhere.
vm_pick_ports() {
	local p used

	used=$(ss -Huan 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }')
	p=$((20000 + ($$ * 2 + RANDOM) % 20000 * 2))
	while grep -qxE "$p|$((p + 1))" <<<"$used"; do
		p=$((p + 2))
		[ "$p" -lt 60000 ] || p=20000
	done
	echo "$p $((p + 1))"
}

# Write the env file that guest $2 sources before running the test.
vm_write_env() {
	local dir=$1 g=$2 n=$3 script=$4 timeout=$5 var
	local my=1 peer=2

	[ "$g" = a ] || { my=2; peer=1; }
	{
		printf 'export %s=%q\n' \
			GUEST "$g" NGUESTS "$n" \
			MY_IP "10.11.0.$my" PEER_IP "10.11.0.$peer" \
			MY_IP6 "fd11::$my" PEER_IP6 "fd11::$peer" \
			REPO "$REPO" RESULTS /results TEST "$script" \
			GUEST_TIMEOUT "$timeout" KVER "$KVER"
		for var in $(compgen -e | grep '^RXE_'); do
			printf 'export %s=%q\n' "$var" "${!var}"
		done
		# This guest's implementation: RXE_IMPL_A / RXE_IMPL_B win.
		var=RXE_IMPL_${g^^}
		printf 'export RXE_IMPL=%q\n' "${!var:-${RXE_IMPL:-ours}}"
	} >"$dir/env"
}

# vm_smp N: QEMU's -smp for each guest of a run of N guests. A guest that
# can only ever have one vCPU gets TCG code without host memory barriers:
# TCG drops the guest's fences, as if no other thread looked at guest
# memory. QEMU's main loop does, to run virtio-net, and the event-index
# handshake between the guest (publish avail idx, fence, read avail_event)
# and QEMU (publish avail_event, fence, read avail idx) then fails now and
# then: the guest sees no need to kick, QEMU waits for the kick, and the
# transmit ring stops for good (a stalled wire, docs/performance.md). A
# second possible vCPU, never brought up, makes TCG keep the fences.
vm_smp() {
	local smp=${RXE_VM_SMP:-$(($1 == 1 ? 2 : 1))}

	if [ "$smp" = 1 ] && [ "${RXE_VM_ACCEL:-tcg}" = tcg ]; then
		smp=1,maxcpus=2
	fi
	echo "$smp"
}

vm_start() {
	local g=$1 n=$2 out=$3 lport=$4 rport=$5 cmdline smp mac tsc=
	local -a accel=(-accel "tcg,thread=multi" -cpu "${RXE_VM_CPU:-max}") console

	case ${RXE_VM_ACCEL:-tcg} in
	tcg) ;;
	kvm) accel=(-accel kvm -cpu host) ;;
	*) die "RXE_VM_ACCEL must be tcg or kvm" ;;
	esac
	smp=$(vm_smp "$n")
	# A kernel that may have two CPUs of a vendor other than Intel and
	# without constant_tsc (TCG's "max" CPU) takes the TSC for
	# unsynchronized and falls back to the HPET, each read of which QEMU
	# emulates: perftest's clock calibration then failed now and then, and
	# every ktime_get() cost the guest what a real host never pays (a
	# two-vCPU guest on the HPET ran ib_write_lat two-moded). TCG's TSC is
	# the host's, the same on every vCPU, so every TCG guest keeps it.
	[ "${RXE_VM_ACCEL:-tcg}" != tcg ] || tsc=" tsc=reliable"
	if [ "$g" = a ]; then mac=52:54:00:11:00:01; else mac=52:54:00:11:00:02; fi
	cmdline="console=ttyS0,115200 panic=-1 loglevel=6 printk.time=1 no_timer_check$tsc"
	cmdline+=" net.ifnames=0 rxetb.guest=$g rxetb.init=$SELFTESTS/lib/guest-init.sh"
	# PCI interrupts routed by the firmware's table, not by ACPI: the
	# AML of each interrupt link the virtio devices use took 0.3 s to
	# run under TCG, 0.6 s of every boot.
	cmdline+=" pci=noacpi"
	# No self-test of every crypto algorithm the kernel registers (0.3 s
	# of a boot under TCG): the ICRC the tests need is judged on the wire.
	cmdline+=" cryptomgr.notests"
	cmdline+="${RXE_VM_APPEND:+ $RXE_VM_APPEND}"
	if [ "${RXE_VM_SHELL:-0}" = 1 ]; then
		console=(-chardev "stdio,id=con0,mux=on,signal=off,logfile=$out/console.log"
			-serial chardev:con0 -mon chardev=con0)
	else
		console=(-chardev "file,id=con0,path=$out/console.log" -serial chardev:con0
			-monitor "unix:$VM_TMP/$g.monitor,server=on,wait=off")
	fi

	VM_CMD=(qemu-system-x86_64 -name "rxe-$g,debug-threads=on" -nodefaults -no-user-config \
		-display none -no-reboot "${accel[@]}" \
		-smp "$smp" -m "${RXE_VM_MEM:-2G}" \
		-kernel "$KERNEL_IMAGE" -initrd "$KERNEL_INITRD" -append "$cmdline" \
		"${console[@]}" \
		-fsdev "local,id=root,path=/,readonly=on,security_model=none,multidevs=remap" \
		-device "virtio-9p-pci,fsdev=root,mount_tag=hostroot" \
		-fsdev "local,id=mods,path=$KERNEL_MODULES,readonly=on,security_model=none" \
		-device "virtio-9p-pci,fsdev=mods,mount_tag=modules" \
		-fsdev "local,id=res,path=$VM_TMP/share,security_model=none" \
		-device "virtio-9p-pci,fsdev=res,mount_tag=results" \
		-netdev "dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=$lport,remote.type=inet,remote.host=127.0.0.1,remote.port=$rport" \
		-device "virtio-net-pci,netdev=n0,mac=$mac,speed=10000,duplex=full${RXE_VM_NIC:+,$RXE_VM_NIC}")
	[ -z "${RXE_VM_PLUGIN:-}" ] || VM_CMD+=(-plugin "$RXE_VM_PLUGIN,out=$VM_TMP/share/$g")
	if [ "${RXE_VM_SHELL:-0}" = 1 ]; then
		# In the foreground: the console is this terminal.
		"${VM_CMD[@]}" 2>"$out/qemu.log"
		return
	fi
	"${VM_CMD[@]}" >"$out/qemu.log" 2>&1 </dev/null &
	VM_PIDS+=($!)
}

# vm_host_checks DIR: run the checks a guest left in DIR/host-checks
# (lib/guest.sh: host_check), each in DIR under a timeout. Each adds "ok -
# what (host)" or "not ok - what (host)" with the end of its output to
# DIR/test.log and its whole output to DIR/checks.log, and a last line
# "# host: N checks, M failed" follows them; a failed one goes to
# DIR/failed and turns the guest's status 0 into 1.
vm_host_checks() {
	local dir=$1 what cmd rc n=0 failed=0 log=$1/host-check.out

	while IFS=$'\t' read -r what cmd; do
		rc=0
		n=$((n + 1))
		(cd "$dir" && eval "timeout -k 5 300 $cmd") >"$log" 2>&1 </dev/null || rc=$?
		if [ "$rc" = 0 ]; then
			echo "ok - $what (host)" >>"$dir/test.log"
			echo "=== ok - $what (host: exit 0)" >>"$dir/checks.log"
		else
			{
				echo "not ok - $what (host)"
				tail -n 40 "$log" | sed 's/^/    /'
				echo "    (exit code $rc)"
			} >>"$dir/test.log"
			echo "=== not ok - $what (host: exit $rc)" >>"$dir/checks.log"
			echo "$what (host)" >>"$dir/failed"
			failed=$((failed + 1))
		fi
		cat "$log" >>"$dir/checks.log"
	done <"$dir/host-checks"
	rm -f "$log"
	echo "# host: $n checks, $failed failed" >>"$dir/test.log"
	if [ "$failed" != 0 ] && [ "$(cat "$dir/status")" = 0 ]; then
		echo 1 >"$dir/status"
	fi
	return 0
}

vm_run() {
	local out=$1 n=$2 timeout=$3 script=$4 g i start ports rc=0 reason running
	local timed_out=0
	local -a guests=(a) pids

	[ "$n" = 1 ] || [ "$n" = 2 ] || die "guests must be 1 or 2, not '$n'"
	[ "$n" = 1 ] || guests=(a b)
	script=$(realpath "$script")
	VM_TMP=$(mktemp -d "${TMPDIR:-/tmp}/rxe-vm.XXXXXX")
	mkdir -p "$VM_TMP/share/barrier"
	read -r -a ports <<<"$(vm_pick_ports)"
	# The guest has its own /tmp and /run: give it a copy from there.
	case $script in
	/tmp/* | /run/* | /dev/*)
		cp "$script" "$VM_TMP/share/${script##*/}"
		script=/results/${script##*/}
		;;
	esac
	VM_REASON=
	VM_BOOT_FAILED=

	# The guest gets its own timeout, shorter than ours, so that it can
	# still dump its blocked tasks and processes before we kill it.
	for g in "${guests[@]}"; do
		mkdir -p "$out/$g" "$VM_TMP/share/$g"
		vm_write_env "$VM_TMP/share/$g" "$g" "$n" "$script" \
			"$((timeout > 60 ? timeout - 20 : timeout * 2 / 3))"
	done
	if [ "${VM_FOLLOW:-0}" = 1 ] && [ "${RXE_VM_SHELL:-0}" != 1 ]; then
		for g in "${guests[@]}"; do
			: >"$VM_TMP/share/$g/test.log"
			if [ "$n" = 1 ]; then
				tail -n +1 -F "$VM_TMP/share/$g/test.log" 2>/dev/null &
			else
				tail -n +1 -F "$VM_TMP/share/$g/test.log" 2>/dev/null |
					sed -u "s/^/[$g] /" &
			fi
			VM_TAILS+=($!)
		done
	fi

	start=$SECONDS
	if [ "${RXE_VM_SHELL:-0}" = 1 ]; then
		vm_start a 1 "$out/a" "${ports[0]}" "${ports[1]}" || rc=1
	else
		vm_start a "$n" "$out/a" "${ports[0]}" "${ports[1]}"
		[ "$n" = 1 ] || vm_start b "$n" "$out/b" "${ports[1]}" "${ports[0]}"
		pids=("${VM_PIDS[@]}")
		while :; do
			running=0
			for i in "${!pids[@]}"; do
				[ -z "${pids[i]}" ] && continue
				if kill -0 "${pids[i]}" 2>/dev/null; then
					running=$((running + 1))
					continue
				fi
				wait "${pids[i]}" 2>/dev/null
				pids[i]=
				# Tell the peer, waiting at a barrier, not to wait any more.
				g=${guests[i]}
				[ -e "$VM_TMP/share/$g/status" ] || touch "$VM_TMP/share/$g/dead"
			done
			[ "$running" != 0 ] || break
			if [ $((SECONDS - start)) -ge "$timeout" ]; then
				VM_REASON="timeout after $timeout s"
				timed_out=1
				for i in "${!pids[@]}"; do
					[ -n "${pids[i]}" ] || continue
					VM_REASON+=" (guest ${guests[i]} still running)"
					kill -9 "${pids[i]}" 2>/dev/null
					wait "${pids[i]}" 2>/dev/null
				done
				rc=1
				break
			fi
			sleep 0.5
		done
	fi
	VM_PIDS=()
	if [ "${#VM_TAILS[@]}" != 0 ]; then
		# Give the followers their last lines.
		sleep 0.5
		kill "${VM_TAILS[@]}" 2>/dev/null
		VM_TAILS=()
	fi

	for g in "${guests[@]}"; do
		cp -r "$VM_TMP/share/$g/." "$out/$g/" 2>/dev/null
		rm -f "$out/$g/env" "$out/$g/dead"
		[ ! -e "$out/$g/status" ] || [ ! -s "$out/$g/host-checks" ] ||
			vm_host_checks "$out/$g"
		reason=
		if [ ! -e "$out/$g/status" ] &&
			! grep -q "rxe-testbed: guest $g running" "$out/$g/console.log" 2>/dev/null; then
			VM_BOOT_FAILED+="${VM_BOOT_FAILED:+ }$g"
		fi
		if [ ! -e "$out/$g/status" ]; then
			[ "$timed_out" = 0 ] || continue
			if grep -q 'Kernel panic' "$out/$g/console.log" 2>/dev/null; then
				reason="guest $g: kernel panic: $(grep -m1 'Kernel panic' "$out/$g/console.log" | sed 's/^\[[^]]*\] //')"
			elif grep -q 'rxe-testbed initramfs:' "$out/$g/console.log" 2>/dev/null; then
				reason="guest $g: $(grep -m1 'rxe-testbed initramfs:' "$out/$g/console.log")"
			else
				reason="guest $g: QEMU exited without a test status (see console.log, qemu.log)"
			fi
		elif [ -s "$out/$g/reason" ]; then
			reason=$(cat "$out/$g/reason")
		elif [ "$(cat "$out/$g/status")" != 0 ]; then
			if [ -s "$out/$g/failed" ]; then
				reason="guest $g: $(paste -sd ';' "$out/$g/failed" | sed 's/;/; /g')"
			else
				reason="guest $g: test exited with status $(cat "$out/$g/status")"
			fi
		fi
		if [ -n "$reason" ]; then
			rc=1
			VM_REASON+="${VM_REASON:+; }$reason"
		fi
	done
	rm -rf "$VM_TMP"
	VM_TMP=
	return "$rc"
}

# Read a "# key: value" line from a test script's header: the comment
# lines it starts with, however many.
vm_header() {
	awk -v key="$2" '!/^#/ { exit }
		$0 ~ "^# *" key ":" { sub("^# *" key ": *", ""); print $1; exit }' "$1"
}
