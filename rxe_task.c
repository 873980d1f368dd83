// SPDX-License-Identifier: GPL-2.0
/*
 * Per-QP tasks.
 *
 * A run request either claims an idle task or marks a running one ARMED,
 * so the work it asks for is never lost and the function never runs in
 * two contexts at once. The claiming context runs the function inline
 * when it can: with interrupts enabled, not already inside a task on this
 * CPU (a completion handler that posts a send, for example), and not in a
 * thread that shares its CPU fairly with user space
 * (rxe_task_fair_thread()). A task that keeps reporting more work past its
 * budget moves to the workqueue, so one busy QP cannot hold a CPU's
 * softirq forever.
 *
 * The function always runs with bottom halves disabled, whatever context
 * called for it: the data path then has one execution environment, the
 * one the receive softirq gives it.
 */

#include <linux/percpu.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/sched.h>
#include <linux/sched/rt.h>

#include "rxe_counters.h"
#include "rxe_task.h"
#include "rxe_verbs.h"

/* Calls of the function before a run yields to the workqueue. */
#define RXE_TASK_BUDGET		64

static struct workqueue_struct *rxe_wq;

/*
 * Tasks running on this CPU. An inline run may nest one level: a requester
 * looping a packet back runs the receiving QP's task at once; deeper runs
 * go to the workqueue, which bounds the stack.
 */
#define RXE_TASK_MAX_DEPTH	2

static DEFINE_PER_CPU(unsigned int, rxe_task_depth);

/*
 * Is this a kernel thread at normal priority running the network's
 * softirq work? Under load the kernel hands the receive softirq to
 * ksoftirqd, and threaded NAPI polls in a thread of its own; either shares
 * the CPU fairly with user tasks. An application busy-polling its CQ on
 * that CPU, as perftest and most RDMA applications do, would then leave
 * the data path half the CPU, where a NIC's work never waits behind the
 * application. The workqueue's high-priority workers run the task instead.
 * They only do what the softirq has already taken in, so the softirq's
 * own fairness still bounds how much of a CPU arriving packets can take.
 * A kernel thread that posts work with bottom halves off looks the same
 * and is deferred too, which costs it a wakeup and nothing else.
 */
static bool rxe_task_fair_thread(void)
{
	return in_softirq() && (current->flags & PF_KTHREAD) &&
	       !is_idle_task(current) && !rt_task(current) &&
	       task_nice(current) > MIN_NICE;
}

/*
 * Run the function until it has no more work, a run request is not
 * pending, or the budget is spent. The caller owns the task (BUSY) and has
 * bottom halves disabled.
 */
static void rxe_task_do_run(struct rxe_task *task)
{
	unsigned int budget = RXE_TASK_BUDGET;
	unsigned long flags;
	bool more;

	__this_cpu_inc(rxe_task_depth);
	for (;;) {
		more = task->fn(task->qp);

		spin_lock_irqsave(&task->lock, flags);
		if (task->stop) {
			task->pending = more || task->state == RXE_TASK_ARMED;
			task->state = RXE_TASK_DISABLED;
		} else if (task->state == RXE_TASK_ARMED) {
			task->state = RXE_TASK_BUSY;
			more = true;
		} else if (!more) {
			task->state = RXE_TASK_IDLE;
		}
		if (task->state != RXE_TASK_BUSY || !more || !--budget)
			break;
		spin_unlock_irqrestore(&task->lock, flags);
	}
	/* Out of budget with work left: the workqueue takes over, still BUSY. */
	if (task->state == RXE_TASK_BUSY)
		queue_work(rxe_wq, &task->work);
	spin_unlock_irqrestore(&task->lock, flags);
	__this_cpu_dec(rxe_task_depth);
}

static void rxe_task_work(struct work_struct *work)
{
	struct rxe_task *task = container_of(work, struct rxe_task, work);
	unsigned long flags;
	bool stopped;

	/* rxe_task_disable() may have come in while the work was queued. */
	spin_lock_irqsave(&task->lock, flags);
	stopped = task->stop;
	if (stopped) {
		task->pending = true;
		task->state = RXE_TASK_DISABLED;
	}
	spin_unlock_irqrestore(&task->lock, flags);
	if (stopped)
		return;

	local_bh_disable();
	rxe_task_do_run(task);
	local_bh_enable();
}

/*
 * Take a run request. Return true when the caller now owns an idle task
 * and must run it; otherwise the request is recorded where its owner (or
 * rxe_task_enable()) will see it.
 */
static bool rxe_task_claim(struct rxe_task *task)
{
	unsigned long flags;
	bool claimed = false;

	spin_lock_irqsave(&task->lock, flags);
	switch (task->state) {
	case RXE_TASK_IDLE:
		task->state = RXE_TASK_BUSY;
		claimed = true;
		break;
	case RXE_TASK_BUSY:
		task->state = RXE_TASK_ARMED;
		break;
	case RXE_TASK_ARMED:
		break;
	case RXE_TASK_DISABLED:
		task->pending = true;
		break;
	}
	spin_unlock_irqrestore(&task->lock, flags);
	return claimed;
}

/**
 * rxe_task_init() - set up a task, idle
 * @task: the task
 * @qp: its QP
 * @fn: the job; returns true while it has more work
 */
void rxe_task_init(struct rxe_task *task, struct rxe_qp *qp,
		   bool (*fn)(struct rxe_qp *qp))
{
	spin_lock_init(&task->lock);
	task->state = RXE_TASK_IDLE;
	task->pending = false;
	task->stop = false;
	INIT_WORK(&task->work, rxe_task_work);
	task->fn = fn;
	task->qp = qp;
}

/**
 * rxe_task_run() - run a task now if this context can, else defer it
 * @task: the task
 *
 * Context: any.
 */
void rxe_task_run(struct rxe_task *task)
{
	if (irqs_disabled() || in_hardirq() ||
	    this_cpu_read(rxe_task_depth) >= RXE_TASK_MAX_DEPTH) {
		rxe_task_sched(task);
		return;
	}
	if (rxe_task_fair_thread()) {
		if (rxe_task_sched(task))
			rxe_counter_inc(rxe_qp_dev(task->qp),
					RXE_CNT_TASK_DEFERRED);
		return;
	}

	if (!rxe_task_claim(task))
		return;

	local_bh_disable();
	rxe_task_do_run(task);
	local_bh_enable();
}

/**
 * rxe_task_sched() - run a task from the workqueue
 * @task: the task
 *
 * Context: any.
 * Return: true when this call queued the task; false when the request
 * was recorded for the context that owns it.
 */
bool rxe_task_sched(struct rxe_task *task)
{
	if (!rxe_task_claim(task))
		return false;
	queue_work(rxe_wq, &task->work);
	return true;
}

/**
 * rxe_task_disable() - stop a task and wait until it no longer runs
 * @task: the task
 *
 * Run requests that arrive while the task is disabled are remembered and
 * replayed by rxe_task_enable().
 *
 * Context: process context; may sleep.
 */
void rxe_task_disable(struct rxe_task *task)
{
	unsigned long flags;

	spin_lock_irqsave(&task->lock, flags);
	if (task->state == RXE_TASK_IDLE)
		task->state = RXE_TASK_DISABLED;
	else if (task->state != RXE_TASK_DISABLED)
		task->stop = true;
	spin_unlock_irqrestore(&task->lock, flags);

	/*
	 * A BUSY owner runs at most one more call of the function, which is
	 * short; a queued work item sees @stop before it calls the function.
	 */
	while (READ_ONCE(task->state) != RXE_TASK_DISABLED)
		usleep_range(100, 1000);

	flush_work(&task->work);
	spin_lock_irqsave(&task->lock, flags);
	task->stop = false;
	spin_unlock_irqrestore(&task->lock, flags);
}

/**
 * rxe_task_enable() - let a disabled task run again
 * @task: the task
 *
 * A run request that came in while it was disabled is replayed on the
 * workqueue.
 */
void rxe_task_enable(struct rxe_task *task)
{
	unsigned long flags;
	bool pending;

	spin_lock_irqsave(&task->lock, flags);
	pending = task->pending;
	task->pending = false;
	task->state = RXE_TASK_IDLE;
	spin_unlock_irqrestore(&task->lock, flags);

	if (pending)
		rxe_task_sched(task);
}

/**
 * rxe_task_module_init() - create the driver's workqueue
 *
 * Return: 0 or -ENOMEM.
 */
int rxe_task_module_init(void)
{
	/* Reclaim-safe: block and file storage (NVMe, NFS) run over us. */
	rxe_wq = alloc_workqueue("rxe_wq", WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	return rxe_wq ? 0 : -ENOMEM;
}

/**
 * rxe_task_module_exit() - destroy the driver's workqueue
 */
void rxe_task_module_exit(void)
{
	destroy_workqueue(rxe_wq);
}
