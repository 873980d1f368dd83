/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verbs entry points: the ib_device_ops table, and registration of a
 * device with ib_core.
 */
#ifndef RXE_VERBS_OPS_H
#define RXE_VERBS_OPS_H

#include "rxe_dev.h"

/*
 * The uverbs ABI version of the rxe provider: rdma-core accepts 1 and 2 on
 * 64-bit hosts and only 2 on 32-bit ones.
 */
#define RXE_UVERBS_ABI_VERSION	2

/* rxe_verbs.c APIs: */
int rxe_verbs_register(struct rxe_dev *rxe, const char *ibdev_name);

#endif /* RXE_VERBS_OPS_H */
