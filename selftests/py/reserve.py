# SPDX-License-Identifier: GPL-2.0
"""A process cannot take the kernel consumers' share of a device's caps.
Connection requests and replies of rdma_cm go out as MADs, and ib_cm
makes an address handle on the device for each: a process that held all
32768 AHs of the device would leave it none, and no rdma_cm connection,
of any process or of NVMe-oF and NFS, could be made. Of each kind the
kernel creates too, the last eighth of the cap is the kernel's.

The process creates AHs until the driver refuses one: at most 28672 may
be had, and the refusal is ENOMEM. Holding them, rping must connect over
rdma_cm to a server on this guest's own address.

usage: reserve.py DEV IP
"""

import re
import subprocess
import sys
import time

from rxelib import PD, Context, PyverbsRDMAError, check, errno, finish
from pyverbs.addr import AH, AHAttr, GlobalRoute

DEV, IP = sys.argv[1], sys.argv[2]
CAP = 32768
USER_MAX = CAP - CAP // 8

ctx = Context(name=DEV)
pd = PD(ctx)
attr = AHAttr(gr=GlobalRoute(dgid=ctx.query_gid(1, 1), sgid_index=1),
              is_global=1, port_num=1)
ahs, err = [], None
t0 = time.time()
while len(ahs) <= CAP:
    try:
        ahs.append(AH(pd, attr=attr))
    except PyverbsRDMAError as ex:
        err = ex.error_code
        break
print(f"# {len(ahs)} AHs in {time.time() - t0:.1f} s, then errno {err}")
# ib_cm's AHs live only while a MAD goes out: none should be held now.
check(f"a process gets {USER_MAX - 16} to {USER_MAX} AHs of the {CAP} "
      f"(it got {len(ahs)}), then ENOMEM (errno {err})",
      USER_MAX - 16 <= len(ahs) <= USER_MAX and err == errno.ENOMEM)

server = subprocess.Popen(["rping", "-s", "-a", IP, "-v", "-C", "3"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
# The client must not come before the server listens (rping's port 7174).
end = time.time() + 20
while time.time() < end and not re.search(
        r"state LISTEN .*:7174 ",
        subprocess.run(["rdma", "res", "show", "cm_id"], capture_output=True,
                       text=True, check=False).stdout):
    time.sleep(0.1)
client = subprocess.run(["timeout", "30", "rping", "-c", "-a", IP, "-v",
                         "-C", "3"], capture_output=True, text=True,
                        check=False)
try:
    out, _ = server.communicate(timeout=30)
except subprocess.TimeoutExpired:
    server.kill()
    out, _ = server.communicate()
print("# rping client: " + (client.stdout + client.stderr).strip()
      .replace("\n", "\n# "))
check(f"with {len(ahs)} AHs held, rping connects over rdma_cm and "
      "finishes 3 rounds", client.returncode == 0 and server.returncode == 0
      and "rdma-ping-2:" in client.stdout,
      f"client exit {client.returncode}, server exit {server.returncode}: "
      f"{out.strip()[-300:]}")
for ah in ahs:
    ah.close()
finish()
