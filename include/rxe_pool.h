/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Object lifetime for the soft-RoCE driver: reference counts that the
 * destroy verb drains, per-device object limits, and a module-wide count
 * of live objects for the leak audit at unload.
 */
#ifndef RXE_POOL_H
#define RXE_POOL_H

#include <linux/completion.h>
#include <linux/refcount.h>
#include <linux/atomic.h>
#include <linux/gfp.h>

/**
 * enum rxe_obj_type - the object kinds the driver counts
 * @RXE_OBJ_UCONTEXT: user context
 * @RXE_OBJ_PD: protection domain
 * @RXE_OBJ_AH: address handle
 * @RXE_OBJ_CQ: completion queue
 * @RXE_OBJ_SRQ: shared receive queue
 * @RXE_OBJ_QP: queue pair
 * @RXE_OBJ_MR: memory region
 * @RXE_OBJ_MW: memory window
 * @RXE_OBJ_NTYPES: number of kinds
 */
enum rxe_obj_type {
	RXE_OBJ_UCONTEXT,
	RXE_OBJ_PD,
	RXE_OBJ_AH,
	RXE_OBJ_CQ,
	RXE_OBJ_SRQ,
	RXE_OBJ_QP,
	RXE_OBJ_MR,
	RXE_OBJ_MW,
	RXE_OBJ_NTYPES,
};

/**
 * struct rxe_obj - reference count of an object that the wire can reach
 * @ref: one reference for the object's creator, one for each lookup that
 *	is still using it (a packet, a work request, a deferred context)
 * @released: completed when @ref reaches zero; the destroy verb waits on
 *	it before the object's memory may go back to ib_core
 */
struct rxe_obj {
	refcount_t ref;
	struct completion released;
};

/**
 * struct rxe_limit - a per-device cap on the number of live objects
 * @count: live objects of this kind
 * @max: the cap advertised in the device attributes
 */
struct rxe_limit {
	atomic_t count;
	u32 max;
};

/**
 * rxe_obj_gfp() - allocation flags for the memory an object is built of
 * @user: the object belongs to a user context
 *
 * Userspace chooses how large its rings, tables and shadow copies are,
 * so that memory is charged to the calling task's memory cgroup, and a
 * request that the cgroup or the system cannot grant fails the verb with
 * -ENOMEM rather than waking the OOM killer or logging an allocation
 * failure. A kernel consumer's objects are the kernel's own: uncharged.
 *
 * Return: the gfp flags for process context.
 */
static inline gfp_t rxe_obj_gfp(bool user)
{
	return user ? GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN :
		      GFP_KERNEL;
}

/* rxe_pool.c APIs: */
void rxe_obj_init(struct rxe_obj *obj);
void *rxe_obj_kvzalloc(size_t size, bool user);
void rxe_obj_drain(struct rxe_obj *obj);
int rxe_limit_take(struct rxe_limit *limit, enum rxe_obj_type type, bool user);
void rxe_limit_drop(struct rxe_limit *limit, enum rxe_obj_type type);
const char *rxe_obj_name(enum rxe_obj_type type);
int rxe_obj_live(enum rxe_obj_type type);

/**
 * rxe_obj_get() - take a reference unless the object is being destroyed
 * @obj: the object
 *
 * Return: true when the reference was taken.
 */
static inline bool rxe_obj_get(struct rxe_obj *obj)
{
	return refcount_inc_not_zero(&obj->ref);
}

/**
 * rxe_obj_put() - drop a reference taken with rxe_obj_get()
 * @obj: the object
 */
static inline void rxe_obj_put(struct rxe_obj *obj)
{
	if (refcount_dec_and_test(&obj->ref))
		complete(&obj->released);
}

#endif /* RXE_POOL_H */
