// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for ping-pongs over a lossy link: ibv_destroy_qp() waits
 * a second before it destroys the QP.
 *
 * ibv_rc_pingpong ends without a handshake: each side destroys its QP as
 * soon as its own last send and receive have completed. If the ACK for the
 * peer's last SEND was lost, the peer sends it again, and when the side
 * done first has destroyed its QP by then, the retries find no QP and run
 * out (IB_WC_RETRY_EXC_ERR) with every byte delivered. That happens on any
 * RC implementation, a NIC's too. An application with an end handshake
 * keeps its QP until the peer is done; this gives the ping-pong the same,
 * so that a retry that runs out in the test is the driver's.
 *
 * Built on the host before the guests boot (build_tools, lib/common.sh):
 *	gcc -Wall -Wextra -Werror -O2 -shared -fPIC rxe-linger.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct ibv_qp;

int ibv_destroy_qp(struct ibv_qp *qp)
{
	static int (*real_destroy)(struct ibv_qp *qp);

	if (!real_destroy) {
		real_destroy = (int (*)(struct ibv_qp *))dlsym(RTLD_NEXT,
							       __func__);
		if (!real_destroy) {
			fprintf(stderr, "rxe-linger: no %s: %s\n", __func__,
				dlerror());
			abort();
		}
	}
	fprintf(stderr, "rxe-linger: the QP stays 1 s for the peer's retries\n");
	sleep(1);
	return real_destroy(qp);
}
