#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Print the kernel build tree to build against: the running kernel's when
# it has one, else the Debian headers of the ABI that linux-image-amd64
# names, else the newest installed linux-headers-*-amd64 tree.

run="/lib/modules/$(uname -r)/build"
if [ -d "$run" ]; then
	echo "$run"
	exit 0
fi

abi=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/.*Depends: linux-image-\(.*\)$/\1/p' | head -n 1)
if [ -n "$abi" ] && [ -d "/usr/src/linux-headers-$abi" ]; then
	echo "/usr/src/linux-headers-$abi"
	exit 0
fi

newest=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1)
if [ -n "$newest" ]; then
	echo "$newest"
	exit 0
fi

echo "find-kdir: no kernel headers found; run selftests/setup.sh or pass KDIR=" >&2
exit 1
