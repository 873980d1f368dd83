// SPDX-License-Identifier: GPL-2.0
/*
 * Object lifetime: reference counts drained by the destroy verbs, and the
 * per-device and module-wide object counts.
 *
 * ib_core allocates most of our objects (PD, AH, CQ, SRQ, QP, MW) and frees
 * them as soon as the destroy verb returns. An object that packets or work
 * requests can reach therefore carries a struct rxe_obj, and its destroy
 * verb first unpublishes it (so no new lookup finds it), then calls
 * rxe_obj_drain() to wait until every user of it is gone.
 *
 * The memory an object is built of is charged to the creating task's
 * memory cgroup when the object is userspace's (rxe_obj_gfp()).
 */

#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "rxe_pool.h"

static atomic_t rxe_live[RXE_OBJ_NTYPES];

static const char * const rxe_obj_names[RXE_OBJ_NTYPES] = {
	[RXE_OBJ_UCONTEXT]	= "ucontext",
	[RXE_OBJ_PD]		= "pd",
	[RXE_OBJ_AH]		= "ah",
	[RXE_OBJ_CQ]		= "cq",
	[RXE_OBJ_SRQ]		= "srq",
	[RXE_OBJ_QP]		= "qp",
	[RXE_OBJ_MR]		= "mr",
	[RXE_OBJ_MW]		= "mw",
};

/**
 * rxe_obj_init() - start an object's life with its creator's reference
 * @obj: the object
 */
void rxe_obj_init(struct rxe_obj *obj)
{
	refcount_set(&obj->ref, 1);
	init_completion(&obj->released);
}

/**
 * rxe_obj_drain() - drop the creator's reference and wait for the others
 * @obj: the object, already unpublished from every lookup table
 *
 * Every other reference is held by a context that finishes on its own
 * (a packet being processed, a work item), so the wait is bounded; skbs
 * in the network stack pin no object (struct rxe_net_tx). A reference
 * that is never dropped is a driver bug; say so once a minute instead of
 * hanging silently.
 *
 * Context: process context; may sleep.
 */
void rxe_obj_drain(struct rxe_obj *obj)
{
	rxe_obj_put(obj);
	while (!wait_for_completion_timeout(&obj->released, 60 * HZ))
		pr_err("still waiting for %u references to drain\n",
		       refcount_read(&obj->ref));
}

/**
 * rxe_obj_kvzalloc() - zeroed memory for an object, of any size
 * @size: bytes; array_size() saturates an overflow into a failure
 * @user: the object belongs to a user context (rxe_obj_gfp())
 *
 * kvzalloc() for a user object, but with the effort split as it should
 * be: a larger-than-page kmalloc() is only tried lightly, as kvmalloc()
 * does unless told __GFP_RETRY_MAYFAIL, and the vmalloc fallback takes
 * its pages one at a time, with the charge allowed to fail rather than
 * to call the OOM killer. Free with kvfree().
 *
 * Context: process context.
 * Return: the memory, or NULL.
 */
void *rxe_obj_kvzalloc(size_t size, bool user)
{
	void *p;

	if (!user)
		return kvzalloc(size, GFP_KERNEL);
	if (size <= PAGE_SIZE)
		return kzalloc(size, rxe_obj_gfp(true));
	p = kmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN |
		    __GFP_ZERO);
	return p ?: __vmalloc(size, rxe_obj_gfp(true) | __GFP_ZERO);
}

/*
 * The kinds kernel consumers create as well as userspace. Of each, the
 * last 1/2^RXE_LIMIT_KERNEL_SHIFT of the cap is theirs: one process that
 * took every AH of the device would otherwise leave ib_cm none to answer
 * a connection request with, every rdma_cm user's included, and one that
 * took every PD, CQ or QP would keep NVMe-oF and NFS from reconnecting.
 * Contexts and memory windows only userspace creates.
 */
#define RXE_LIMIT_KERNEL_KINDS	(BIT(RXE_OBJ_PD) | BIT(RXE_OBJ_AH) | \
				 BIT(RXE_OBJ_CQ) | BIT(RXE_OBJ_SRQ) | \
				 BIT(RXE_OBJ_QP) | BIT(RXE_OBJ_MR))
#define RXE_LIMIT_KERNEL_SHIFT	3

/**
 * rxe_limit_take() - account one more object of a kind against its cap
 * @limit: the device's limit for this kind
 * @type: the kind, for the module-wide count
 * @user: the object is userspace's, which may not take the share of the
 *	cap kept for kernel consumers
 *
 * Return: 0, or -ENOMEM when the device already holds @limit->max, or
 * for @user, all but the kernel's share of it.
 */
int rxe_limit_take(struct rxe_limit *limit, enum rxe_obj_type type, bool user)
{
	u32 max = limit->max;

	if (user && (RXE_LIMIT_KERNEL_KINDS & BIT(type)))
		max -= max >> RXE_LIMIT_KERNEL_SHIFT;
	if (atomic_inc_return(&limit->count) > max) {
		atomic_dec(&limit->count);
		return -ENOMEM;
	}
	atomic_inc(&rxe_live[type]);
	return 0;
}

/**
 * rxe_limit_drop() - account one object less
 * @limit: the device's limit for this kind
 * @type: the kind
 */
void rxe_limit_drop(struct rxe_limit *limit, enum rxe_obj_type type)
{
	atomic_dec(&limit->count);
	atomic_dec(&rxe_live[type]);
}

/**
 * rxe_obj_name() - the printable name of an object kind
 * @type: the kind
 *
 * Return: a static string.
 */
const char *rxe_obj_name(enum rxe_obj_type type)
{
	return type < RXE_OBJ_NTYPES ? rxe_obj_names[type] : "?";
}

/**
 * rxe_obj_live() - how many objects of a kind exist in the whole module
 * @type: the kind
 *
 * Return: the count; the module exit path expects zero.
 */
int rxe_obj_live(enum rxe_obj_type type)
{
	return atomic_read(&rxe_live[type]);
}
