#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A second kernel consumer: NFS over RDMA. Guest b runs the kernel's NFS
# server on a tmpfs, NFSv4.2 only, listening on RDMA port 20049 (svcrdma);
# guest a mounts it with proto=rdma (xprtrdma), writes 16 MiB (4 on a
# second kernel) of a known pattern, reads it back past its page cache
# and compares, writes many
# small files, and unmounts. The server checks that its tmpfs holds the
# same bytes. Then both stop NFS and unload rpcrdma before `rdma link
# delete`: the ULP's hold on the device must let go.
#
# xprtrdma registers the client's pages with fast registration (REG_MR)
# and invalidates them locally (LOCAL_INV) or takes remote invalidation
# (SEND with invalidate) from the server; svcrdma pulls large writes with
# RDMA READ and pushes large reads with RDMA WRITE, both on kernel QPs and
# kernel CQs, and small calls and replies go as SENDs.
#
# guests: 2
# timeout: 600
# kernels: all

# Functions below run through check, which shellcheck cannot follow.
# shellcheck disable=SC2317

# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"

# On the TCG bed 16 MiB over NFS can take a minute; the server also waits
# out its grace period (10 s, the least nfsd takes) before the first OPEN.
CHECK_TIMEOUT=300
BARRIER_TIMEOUT=400

EXPORT=/export
MNT=/mnt/nfs
PORT=20049
FILE_MIB=16
# A second kernel (RXE_AGAIN) writes 4 MiB: what differs between kernels
# is xprtrdma and svcrdma, which every transfer exercises; the volume ran
# on the first.
[ "${RXE_AGAIN:-0}" != 1 ] || FILE_MIB=4
NSMALL=200
KEY=00112233445566778899aabbccddeeff

# small_is FILE I: FILE holds "small file I" and nothing more. Read with
# a builtin: a fork and exec per file costs more than the NFS calls here.
small_is() {
	local line rest=

	{ IFS= read -r line && IFS= read -r rest; } <"$1"
	[ "$line" = "small file $2" ] && [ -z "$rest" ] && return 0
	echo "$1 holds '${line:0:80}' '${rest:0:80}'"
	return 1
}

# nfs_tools: the NFS programs, into this guest's root (a tmpfs over the
# host's): the host does not install them, for its packages would start
# an NFS server and rpcbind there. run.sh unpacks them (guest_debs_prepare
# in lib/kernel.sh) and names the folder in RXE_GUEST_DEBS.
nfs_tools() {
	local src=${RXE_GUEST_DEBS:-} f

	if [ -z "$src" ] || [ ! -x "$src/usr/sbin/rpc.nfsd" ]; then
		echo "no unpacked nfs-kernel-server (RXE_GUEST_DEBS='$src'):" \
			"run.sh could not fetch it, see kernel.log"
		return 1
	fi
	for f in rpc.nfsd rpc.mountd exportfs; do
		cp "$src/usr/sbin/$f" /usr/sbin/ || return 1
	done
	cp "$src/sbin/mount.nfs" /usr/sbin/ &&
		ln -sf mount.nfs /usr/sbin/mount.nfs4 &&
		ln -sf mount.nfs /usr/sbin/umount.nfs4 &&
		cp -P "$src"/usr/lib/x86_64-linux-gnu/libwrap.so.0* /usr/lib/x86_64-linux-gnu/ &&
		mkdir -p /var/lib/nfs || return 1
	if ldd /usr/sbin/rpc.mountd /usr/sbin/mount.nfs | grep "not found"; then
		return 1
	fi
	echo "rpc.nfsd, rpc.mountd, exportfs and mount.nfs4 from $src"
}

# --- server (b) -------------------------------------------------------------

# nfs_server_start: nfsd on a tmpfs export, NFSv4.2 only, TCP 2049 and
# RDMA 20049. NFSv4 needs neither rpcbind nor statd; mountd answers the
# kernel's export lookups.
nfs_server_start() {
	mkdir -p "$EXPORT" /var/lib/nfs/v4recovery &&
		mount -t tmpfs -o size=96m tmpfs "$EXPORT" &&
		chmod 1777 "$EXPORT" &&
		mount -t nfsd nfsd /proc/fs/nfsd &&
		echo 10 >/proc/fs/nfsd/nfsv4leasetime &&
		echo 10 >/proc/fs/nfsd/nfsv4gracetime &&
		echo "$EXPORT *(rw,fsid=0,no_root_squash,insecure,no_subtree_check,sync)" \
			>/etc/exports &&
		exportfs -ra &&
		rpc.mountd -N 3 --no-udp &&
		rpc.nfsd -N 3 -V 4.2 --no-udp --rdma="$PORT" 4 || return 1
	cat /proc/fs/nfsd/portlist
}

nfs_server_stop() {
	local rc=0

	rpc.nfsd 0 || rc=1
	exportfs -ua || rc=1
	pkill -x rpc.mountd || rc=1
	umount /proc/fs/nfsd || rc=1
	umount "$EXPORT" || rc=1
	return "$rc"
}

# server_holds: the big file on the export is what the client wrote, and
# so are the small ones.
server_holds() {
	local want got i

	read -r want _ <"$RESULTS/nfs-big.sha256" || { echo "no checksum from the client"; return 1; }
	got=$(sha256sum <"$EXPORT/big")
	got=${got%% *}
	echo "client wrote $want, the export holds $got"
	[ "$want" = "$got" ] || return 1
	for ((i = 0; i < NSMALL; i++)); do
		small_is "$EXPORT/small/$i" "$i" || return 1
	done
	echo "and the $NSMALL small files"
}

# --- client (a) -------------------------------------------------------------

nfs_mount() {
	mkdir -p "$MNT" &&
		mount -t nfs4 -o "vers=4.2,proto=rdma,port=$PORT" "$PEER_IP:/" "$MNT" &&
		grep " $MNT " /proc/mounts
}

# write_big FILE: copy the pattern to the mount and flush it.
write_big() {
	dd if="$1" of="$MNT/big" bs=1M conv=fsync 2>&1
}

# read_big FILE: read the file back from the server, not the page cache.
read_big() {
	echo 3 >/proc/sys/vm/drop_caches
	dd if="$MNT/big" of=/tmp/nfs-readback bs=1M iflag=direct 2>&1 &&
		cmp "$1" /tmp/nfs-readback && echo "$FILE_MIB MiB identical"
}

# write_small: many small files, each a few calls (OPEN, WRITE, CLOSE)
# carried inline in SENDs.
write_small() {
	local i

	mkdir "$MNT/small" || return 1
	for ((i = 0; i < NSMALL; i++)); do
		echo "small file $i" >"$MNT/small/$i" || return 1
	done
	sync -f "$MNT/small"
}

read_small() {
	local i

	echo 3 >/proc/sys/vm/drop_caches
	for ((i = 0; i < NSMALL; i++)); do
		small_is "$MNT/small/$i" "$i" || return 1
	done
	echo "$NSMALL small files read back"
}

check "load rdma_rxe ($RXE_IMPL)" load_rxe
check "rdma link add rxe0 type rxe netdev eth0" rxe_add rxe0 eth0
check "barrier: rxe0 is up on both" barrier rxe-up
check "the NFS programs, from nfs-kernel-server and nfs-common" nfs_tools

if [ "$GUEST" = b ]; then
	check "load nfsd and rpcrdma" modprobe -a nfsd rpcrdma
	check_match "nfsd serves $EXPORT, NFSv4.2, on rdma port $PORT" \
		"^rdma $PORT" nfs_server_start
	check "barrier: server ready" barrier server-ready
	check "barrier: client done" barrier client-done
	check_match "the export holds the $FILE_MIB MiB the client wrote (sha256)" \
		"small files" server_holds
	check "stop nfsd, unexport, stop mountd" nfs_server_stop
	check "barrier: server stopped" barrier server-stopped
	check "rmmod nfsd rpcrdma" rmmod nfsd rpcrdma
else
	check "load rpcrdma and nfsv4" modprobe -a rpcrdma nfsv4
	check "make a $FILE_MIB MiB pattern" make_pattern /tmp/nfs-big "$FILE_MIB" "$KEY"
	sha256sum /tmp/nfs-big >"$RESULTS/nfs-big.sha256"
	check "barrier: server ready" barrier server-ready
	check_match "mount -t nfs4 -o proto=rdma,port=$PORT $PEER_IP:/ $MNT" \
		"proto=rdma" nfs_mount
	if grep -q " $MNT " /proc/mounts; then
		check_match "write $FILE_MIB MiB of the pattern over NFS/RDMA (fsync)" \
			"^$FILE_MIB\\+0 records out" write_big /tmp/nfs-big
		check_match "read it back with O_DIRECT: identical to the pattern" \
			"$FILE_MIB MiB identical" read_big /tmp/nfs-big
		check "write $NSMALL small files" write_small
		check_match "read the small files back past the page cache" \
			"small files read back" read_small
		check "umount $MNT" umount "$MNT"
	fi
	check "barrier: client done" barrier client-done
	check "barrier: server stopped" barrier server-stopped
	check "rmmod nfsv4 nfs rpcrdma" rmmod nfsv4 nfs rpcrdma
fi

check "barrier: NFS gone on both" barrier nfs-gone
check "rdma link delete rxe0" rxe_del rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe
dmesg_clean

finish
