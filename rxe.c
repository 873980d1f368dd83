// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_rxe: a soft-RoCEv2 device over any Ethernet netdev.
 *
 * Module init and exit, mirror images of each other. With DEBUG (`make
 * debug`) the in-module self-tests run first and fail the load when a
 * table or a formula is wrong.
 */

#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "rxe_pool.h"
#include "rxe_task.h"
#include "rxe_mr.h"
#include "rxe_net.h"
#include "rxe_dev.h"
#include "rxe_opcode.h"
#include "rxe_icrc.h"
#include "rxe_comp.h"
#include "rxe_resp.h"

#ifdef DEBUG
static int __init rxe_selftests(void)
{
	bool ok = true;

	ok &= rxe_opcode_selftest();
	ok &= rxe_icrc_selftest();
	ok &= rxe_comp_selftest();
	return ok ? 0 : -ENOTRECOVERABLE;
}
#else
static int __init rxe_selftests(void)
{
	return 0;
}
#endif

static int __init rxe_module_init(void)
{
	int err;

	err = rxe_selftests();
	if (err)
		return err;

	rxe_icrc_module_init();
	err = rxe_task_module_init();
	if (err)
		goto err_icrc;
	rxe_resp_module_init();
	err = rxe_mr_module_init();
	if (err)
		goto err_task;
	err = rxe_net_module_init();
	if (err)
		goto err_mr;
	err = rxe_dev_module_init();
	if (err)
		goto err_net;

	pr_info("loaded (version %s)\n", RXE_VERSION);
	return 0;

err_net:
	rxe_net_module_exit();
err_mr:
	rxe_mr_module_exit();
err_task:
	rxe_resp_module_exit();
	rxe_task_module_exit();
err_icrc:
	rxe_icrc_module_exit();
	return err;
}

static void __exit rxe_module_exit(void)
{
	int type, n;

	rxe_dev_module_exit();
	rxe_net_module_exit();
	rxe_mr_module_exit();
	rxe_resp_module_exit();
	rxe_task_module_exit();
	rxe_icrc_module_exit();

	for (type = 0; type < RXE_OBJ_NTYPES; type++) {
		n = rxe_obj_live(type);
		if (n)
			pr_err("%d %s objects leaked\n", n, rxe_obj_name(type));
	}
	pr_info("unloaded\n");
}

module_init(rxe_module_init);
module_exit(rxe_module_exit);

MODULE_ALIAS_RDMA_LINK("rxe");
MODULE_DESCRIPTION("Soft RoCEv2 RDMA device");
MODULE_LICENSE("GPL");
