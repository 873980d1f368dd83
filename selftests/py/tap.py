# SPDX-License-Identifier: GPL-2.0
"""TAP-like checks for the test scripts, with no dependency of their own:
one line per check, 'ok - NAME' or 'not ok - NAME: WHY', and a summary
whose exit status is the scripts' verdict."""

import sys

_fails = []


def check(name, cond, why=""):
    """Report one check; WHY (any value) is printed when it fails."""
    if cond:
        print("ok - " + name)
    else:
        print("not ok - %s%s" % (name, ": " + str(why) if why else ""))
        _fails.append(name)
    sys.stdout.flush()
    return cond


def finish():
    """Print the summary and the failed checks, and exit: 1 if any."""
    print("# %d failed" % len(_fails))
    for name in _fails:
        print("#   failed: " + name)
    sys.exit(1 if _fails else 0)
