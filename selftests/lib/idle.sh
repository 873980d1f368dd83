#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The default script of `vm.sh --shell`: nothing to run.
exit 0
