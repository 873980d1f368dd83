#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make the report of a benchmark run again from its raw output:
#
#   bench/report.sh [DIR]     (default: bench/results/latest)
#
# writes DIR/runs.csv, DIR/results.md and DIR/results.png and prints
# results.md. Nothing is measured: use it after changing the parser or the
# table, or on a copy of someone else's results folder.

set -euo pipefail

bench=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$bench/results/latest}
[ -d "$dir" ] || { echo "report.sh: no folder $dir" >&2; exit 1; }
/usr/bin/python3 "$bench/lib/report.py" "$dir"
cat "$dir/results.md"
echo
echo "report: ${dir%/}/results.md, results.png, runs.csv"
