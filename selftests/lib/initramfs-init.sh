#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Stage 1 of a test guest, /init of the initramfs (busybox sh).
#
# Loads virtio, 9p, overlay and configfs, mounts the host's root (9p tag "hostroot")
# read-only, lays a tmpfs overlay on top and switch_roots into it, running
# stage 2 (lib/guest-init.sh, named by rxetb.init= on the command line)
# with the host's own bash. Stage 2 mounts what is missing itself. Any failure powers the guest off at once, so
# that the host does not wait for its timeout.

export PATH=/bin

mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys

die() {
	echo "rxe-testbed initramfs: $*"
	sync
	echo o >/proc/sysrq-trigger
	sleep 60
}

stage2=
read -r cmdline </proc/cmdline
for arg in $cmdline; do
	case $arg in
	rxetb.init=*) stage2=${arg#rxetb.init=} ;;
	esac
done
[ -n "$stage2" ] || die "no rxetb.init= on the kernel command line"

while read -r m; do
	insmod "/modules/$m" || die "insmod $m failed"
done </modules/order

mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 \
	hostroot /lower || die "cannot mount the host root (9p tag hostroot)"
mount -t tmpfs -o mode=0755 tmpfs /rw || die "cannot mount tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work \
	overlay /newroot || die "cannot mount the overlay root"
[ -e "/newroot$stage2" ] || die "$stage2 not found in the host root"

# Everything else that stage 2 needs mounted: busybox is static and much
# cheaper to exec under TCG than the host's dynamically linked tools.
mount --move /dev /newroot/dev
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mkdir -p /newroot/dev/pts /newroot/dev/shm /newroot/results
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /newroot/dev/pts
mount -t tmpfs -o mode=1777 tmpfs /newroot/dev/shm
mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp
mount -t tmpfs -o mode=0755 tmpfs /newroot/run
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 \
	modules /newroot/lib/modules || die "cannot mount the modules share (9p tag modules)"
mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=512000 \
	results /newroot/results || die "cannot mount the results share (9p tag results)"
mount -t configfs configfs /newroot/sys/kernel/config
mount -t debugfs debugfs /newroot/sys/kernel/debug
exec switch_root /newroot /bin/bash "$stage2"
