/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rings this process has mapped from a uverbs device, found without
 * the provider's private structs: each read-write mapping of
 * /dev/infiniband/uverbs* whose header (struct rxe_queue_buf of the
 * kernel's uapi rdma_user_rxe.h; docs/uabi.md) describes a ring that fits
 * in it. Work queues and completion queues alike: the caller tells them
 * apart by what they hold.
 */
#ifndef RXE_MAPS_H
#define RXE_MAPS_H

#include <stdio.h>
#include <string.h>

#include <rdma/rdma_user_rxe.h>

/*
 * Call @fn on each ring. Return how many there were, or -1 when
 * /proc/self/maps cannot be read (errno says why).
 */
static inline int rxe_maps_each_ring(void (*fn)(struct rxe_queue_buf *q,
						void *arg), void *arg)
{
	char line[512];
	int nrings = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		struct rxe_queue_buf *q;
		char perms[8];

		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3 ||
		    perms[0] != 'r' || perms[1] != 'w' ||
		    end - start < sizeof(*q))
			continue;
		q = (struct rxe_queue_buf *)start;
		if (q->log2_elem_size < 6 || q->log2_elem_size > 20 ||
		    q->index_mask > (1u << 20) ||
		    sizeof(*q) + ((unsigned long)(q->index_mask + 1) <<
				  q->log2_elem_size) > end - start)
			continue;
		nrings++;
		fn(q, arg);
	}
	fclose(f);
	return nrings;
}

#endif /* RXE_MAPS_H */
