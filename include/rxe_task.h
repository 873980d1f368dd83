/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-QP tasks: the requester and the receive path (responder and
 * completer) each run in exactly one context at a time. A run request
 * executes the task inline when the caller's context allows it, and on
 * the driver's workqueue otherwise.
 */
#ifndef RXE_TASK_H
#define RXE_TASK_H

#include <linux/spinlock.h>
#include <linux/workqueue.h>

struct rxe_qp;

/**
 * enum rxe_task_state - who owns a task
 * @RXE_TASK_IDLE: nobody runs it; the next run request claims it
 * @RXE_TASK_BUSY: one context runs it (or a work item is queued to)
 * @RXE_TASK_ARMED: it runs, and a run request came in meanwhile, so the
 *	running context calls the function again before it lets go
 * @RXE_TASK_DISABLED: it must not run; run requests are remembered in
 *	@pending and replayed by rxe_task_enable()
 */
enum rxe_task_state {
	RXE_TASK_IDLE,
	RXE_TASK_BUSY,
	RXE_TASK_ARMED,
	RXE_TASK_DISABLED,
};

/**
 * struct rxe_task - one serialised job of a QP
 * @lock: protects @state, @pending and @stop
 * @state: see enum rxe_task_state
 * @pending: a run was requested while the task was disabled
 * @stop: rxe_task_disable() waits for the running context to let go
 * @work: the deferred run, queued on the driver's workqueue
 * @fn: the job; returns true while it has more work to do
 * @qp: the QP the job belongs to; the QP outlives its tasks because
 *	destroy disables and flushes them before it drains its references
 */
struct rxe_task {
	spinlock_t lock; /* state, pending, stop */
	enum rxe_task_state state;
	bool pending;
	bool stop;
	struct work_struct work;
	bool (*fn)(struct rxe_qp *qp);
	struct rxe_qp *qp;
};

/* rxe_task.c APIs: */
int rxe_task_module_init(void);
void rxe_task_module_exit(void);
void rxe_task_init(struct rxe_task *task, struct rxe_qp *qp,
		   bool (*fn)(struct rxe_qp *qp));
void rxe_task_run(struct rxe_task *task);
bool rxe_task_sched(struct rxe_task *task);
void rxe_task_disable(struct rxe_task *task);
void rxe_task_enable(struct rxe_task *task);

#endif /* RXE_TASK_H */
