#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch --strict over our sources. checkpatch ships in linux-source,
# not in the headers package: say so loudly when it is missing.
#
# Usage: scripts/checkpatch.sh <linux-source-tree> <files...>

src=$1
shift
cp="$src/scripts/checkpatch.pl"
if [ ! -x "$cp" ]; then
	echo "checkpatch: $cp not found." >&2
	echo "checkpatch: \`make setup\` installs linux-source-6.1 and unpacks it; or pass LINUX_SRC=<tree>" >&2
	exit 1
fi

status=0
for f in "$@"; do
	# TRACE_EVENT() layout draws CHECKs that are inherent to the macro.
	case "$f" in
	include/rxe_trace.h) strict= ;;
	*) strict=--strict ;;
	esac
	out=$("$cp" $strict --no-tree --quiet --show-types \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f "$f" 2>&1)
	if [ -n "$out" ]; then
		echo "$out"
		status=1
	fi
done
[ $status -eq 0 ] && echo "checkpatch --strict: clean"
exit $status
