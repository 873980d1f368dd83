#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Put a benchmark report under docs/ to be committed:
#
#   bench/publish.sh [DIR [LABEL]]   (default: bench/results/latest)
#
# makes the report again from DIR's raw output and copies it to
# docs/benchmarks/<date>-<kernel>[-LABEL].md and .png (date and kernel of
# the run), with the plot linked at the top. A LABEL keeps a run of a few
# cases (-f) from taking the name of that day's full run. Commit them with the run's setup in the
# message; the raw output stays in DIR.

set -euo pipefail

bench=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$bench/results/latest}
label=${2:-}
[ -d "$dir" ] || { echo "publish.sh: no folder $dir" >&2; exit 1; }
/usr/bin/python3 "$bench/lib/report.py" "$dir"
date=$(sed -n 's/^date=\([0-9-]*\)T.*/\1/p' "$dir/setup.info")
kernel=$(sed -n 's/^kernel=//p' "$dir/setup.info")
mode=$(sed -n 's/^mode=//p' "$dir/setup.info")
name=${date:-undated}-${kernel:-unknown}
[ "$mode" = full ] || name+=-$mode
[ -z "$label" ] || name+=-$label
docs=$bench/../docs/benchmarks
mkdir -p "$docs"
{
	sed -n '1p' "$dir/results.md"
	echo
	echo "![ours / theirs per case]($name.png)"
	sed -n '2,$p' "$dir/results.md"
} >"$docs/$name.md"
[ ! -e "$dir/results.png" ] || cp "$dir/results.png" "$docs/$name.png"
echo "publish: docs/benchmarks/$name.md$([ -e "$dir/results.png" ] && echo " and .png")"
echo "commit: git add docs/benchmarks/$name.* && git commit"
