// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast verbs on one rxe device: UD QPs attached to a group take the
 * datagrams a QP of the same device sends to it (the IP layer loops them
 * back to a host that joined the group), each QP its own copy, when its
 * Q_Key matches; detaching stops that; the device joins the IP group with
 * its first QP attached and leaves it after the last; the device's limits
 * hold (attaching past them is ENOMEM, detaching what is not attached
 * EINVAL, attaching twice 0). ib_uverbs refuses to destroy a QP still
 * attached (EBUSY); with --limits the program ends by exiting with a QP
 * attached to GROUP, which ib_uverbs then detaches before destroying it.
 *
 *	rxe-mcast DEV NETDEV MY_IP GROUP [--limits]
 *
 * MY_IP and GROUP are both IPv4 or both IPv6. Prints "ok - what" or
 * "not ok - what: why" per check and "# N failed"; exits 1 when any check
 * failed.
 *
 * Built on the host before the guests boot (build_tools, lib/common.sh).
 *	-l:libibverbs.so.1
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define QKEY		0x1234abcdu
#define OTHER_QKEY	0x1234abceu
#define MSG_LEN		256
#define GRH_LEN		40
#define SLOT		(GRH_LEN + MSG_LEN)
#define NSLOTS		16
#define MAX_MCG		128	/* the driver's RXE_MAX_MCG */
#define MCG_QPS		32	/* RXE_MCG_QPS */

static int failed;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static const char *netdev;

static bool check(const char *what, bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("ok - %s\n", what);
	} else {
		failed++;
		printf("not ok - %s: ", what);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	fflush(stdout);
	return ok;
}

/* A UD QP in RTS with its own CQ and a buffer of NSLOTS receive slots. */
struct ud {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char buf[NSLOTS * SLOT];
};

static struct ud *ud_new(uint32_t qkey)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = NSLOTS, .max_recv_wr = NSLOTS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qkey = qkey };
	struct ud *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->cq = ibv_create_cq(ctx, 2 * NSLOTS, NULL, NULL, 0);
	if (!u->cq)
		goto err;
	init.send_cq = init.recv_cq = u->cq;
	u->qp = ibv_create_qp(pd, &init);
	u->mr = ibv_reg_mr(pd, u->buf, sizeof(u->buf), IBV_ACCESS_LOCAL_WRITE);
	if (!u->qp || !u->mr ||
	    ibv_modify_qp(u->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		goto err;
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(u->qp, &attr, IBV_QP_STATE))
		goto err;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	if (ibv_modify_qp(u->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		goto err;
	return u;
err:
	fprintf(stderr, "# cannot set up a UD QP: %s\n", strerror(errno));
	exit(2);
}

static void ud_free(struct ud *u)
{
	if (ibv_destroy_qp(u->qp) || ibv_dereg_mr(u->mr) ||
	    ibv_destroy_cq(u->cq)) {
		fprintf(stderr, "# cannot free a UD QP: %s\n", strerror(errno));
		exit(2);
	}
	free(u);
}

/* The SGE of @u's slot @i, @len bytes. */
static struct ibv_sge ud_sge(struct ud *u, int i, uint32_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)u->buf + i * SLOT,
				 .length = len, .lkey = u->mr->lkey };
}

static void ud_recv(struct ud *u, int n)
{
	struct ibv_recv_wr *bad, wr = { 0 };
	struct ibv_sge sge;
	int i;

	for (i = 0; i < n; i++) {
		sge = ud_sge(u, i, SLOT);
		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		memset(u->buf + i * SLOT, 0, SLOT);
		if (ibv_post_recv(u->qp, &wr, &bad)) {
			fprintf(stderr, "# post_recv: %s\n", strerror(errno));
			exit(2);
		}
	}
}

static void fill(char *p, int msg)
{
	int i;

	for (i = 0; i < MSG_LEN; i++)
		p[i] = (char)(msg * 31 + i);
}

/*
 * Completions on @u's CQ for up to @ms ms, or until @want came; each
 * receive is checked: message k in slot k (the QP takes the messages in
 * order, into its receives in the order posted), from QPN @src. Return
 * the number of good ones, -1 after a bad one (said on stdout).
 */
static int ud_poll(struct ud *u, int want, int ms, uint32_t src)
{
	struct timespec t0, t;
	struct ibv_wc wc;
	char expect[MSG_LEN];
	int got = 0, n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(u->cq, 1, &wc);
		if (n < 0)
			return -1;
		if (n) {
			fill(expect, (int)wc.wr_id);
			if (wc.status || wc.opcode != IBV_WC_RECV ||
			    wc.byte_len != SLOT || wc.src_qp != src ||
			    !(wc.wc_flags & IBV_WC_GRH) ||
			    memcmp(u->buf + wc.wr_id * SLOT + GRH_LEN, expect,
				   MSG_LEN)) {
				printf("# bad receive: status %d opcode %d len %u src %u flags %#x\n",
				       wc.status, wc.opcode, wc.byte_len,
				       wc.src_qp, wc.wc_flags);
				return -1;
			}
			got++;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (got >= want || (t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return got;
		usleep(1000);
	}
}

/* Send messages @first.. @first + @n - 1 from @s to the group of @ah. */
static bool ud_send(struct ud *s, struct ibv_ah *ah, int first, int n)
{
	struct ibv_send_wr *bad, wr = { 0 };
	struct ibv_sge sge;
	struct ibv_wc wc;
	int i, done = 0, k;

	for (i = 0; i < n; i++) {
		fill(s->buf + i * SLOT, first + i);
		sge = ud_sge(s, i, MSG_LEN);
		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = 0xffffff;
		wr.wr.ud.remote_qkey = QKEY;
		if (ibv_post_send(s->qp, &wr, &bad))
			return false;
	}
	for (k = 0; done < n && k < 5000; k++) {
		if (ibv_poll_cq(s->cq, 1, &wc) == 1) {
			if (wc.status)
				return false;
			done++;
		} else {
			usleep(1000);
		}
	}
	return done == n;
}

/* Is @addr among @netdev's multicast addresses (ip maddr)? */
static bool joined(const char *addr)
{
	char cmd[128], line[256], kind[16], a[64];
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ip maddr show dev %s", netdev);
	f = popen(cmd, "r");
	if (!f)
		exit(2);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " %15s %63s", kind, a) == 2 &&
		    (!strcmp(kind, "inet") || !strcmp(kind, "inet6")) &&
		    !strcmp(a, addr))
			found = true;
	pclose(f);
	return found;
}

static void gid_of(const char *ip, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (inet_pton(AF_INET6, ip, gid->raw) == 1)
		return;
	if (inet_pton(AF_INET, ip, gid->raw + 12) != 1) {
		fprintf(stderr, "# not an address: %s\n", ip);
		exit(2);
	}
	gid->raw[10] = gid->raw[11] = 0xff;
}

static int sgid_index(const char *ip)
{
	union ibv_gid want, gid;
	int i;

	gid_of(ip, &want);
	for (i = 0; i < 128; i++)
		if (!ibv_query_gid(ctx, 1, i, &gid) &&
		    !memcmp(gid.raw, want.raw, 16))
			return i;
	fprintf(stderr, "# %s is in no GID of port 1\n", ip);
	exit(2);
}

/* Replication, the Q_Key, detach, and a QP destroyed while attached. */
static void traffic(const char *my_ip, const char *group)
{
	struct ibv_ah_attr ah_attr = { .is_global = 1, .port_num = 1 };
	struct ud *a, *b, *c, *s;
	union ibv_gid mgid;
	struct ibv_ah *ah;
	int na, nb, nc, err;

	gid_of(group, &mgid);
	check("no QP attached: the netdev has not joined the group",
	      !joined(group), "%s is joined already", group);
	a = ud_new(QKEY);
	b = ud_new(QKEY);
	c = ud_new(OTHER_QKEY);
	s = ud_new(QKEY);
	err = ibv_attach_mcast(a->qp, &mgid, 0) ?:
	      ibv_attach_mcast(b->qp, &mgid, 0) ?:
	      ibv_attach_mcast(c->qp, &mgid, 0);
	check("three UD QPs attach to the group", !err, "%s", strerror(err));
	err = ibv_attach_mcast(a->qp, &mgid, 0);
	check("attaching a QP a second time succeeds", !err, "%s",
	      strerror(err));
	check("the netdev joined the group", joined(group),
	      "%s not in ip maddr", group);

	ah_attr.grh.dgid = mgid;
	ah_attr.grh.sgid_index = sgid_index(my_ip);
	ah_attr.grh.hop_limit = 1;
	ah = ibv_create_ah(pd, &ah_attr);
	if (!ah) {
		fprintf(stderr, "# create_ah to the group: %s\n",
			strerror(errno));
		exit(2);
	}
	ud_recv(a, NSLOTS);
	ud_recv(b, NSLOTS);
	ud_recv(c, NSLOTS);
	check("a fourth QP sends 4 datagrams to the group", ud_send(s, ah, 0, 4),
	      "a send failed");
	na = ud_poll(a, 4, 3000, s->qp->qp_num);
	nb = ud_poll(b, 4, 3000, s->qp->qp_num);
	nc = ud_poll(c, 1, 300, s->qp->qp_num);
	check("both QPs with the group's Q_Key receive all 4, bytes intact",
	      na == 4 && nb == 4, "received %d and %d", na, nb);
	check("the QP with another Q_Key receives none", nc == 0,
	      "received %d", nc);

	err = ibv_detach_mcast(b->qp, &mgid, 0);
	check("one QP detaches", !err, "%s", strerror(err));
	err = ibv_detach_mcast(b->qp, &mgid, 0);
	check("detaching it again is EINVAL", err == EINVAL, "%s",
	      strerror(err));
	check("4 more datagrams sent", ud_send(s, ah, 4, 4), "a send failed");
	na = ud_poll(a, 4, 3000, s->qp->qp_num);
	nb = ud_poll(b, 1, 300, s->qp->qp_num);
	check("the QP still attached receives them, the detached one none",
	      na == 4 && nb == 0, "received %d and %d", na, nb);

	err = ibv_detach_mcast(a->qp, &mgid, 0);
	check("the second QP detaches; the one with another Q_Key stays",
	      !err && joined(group), "%s, joined %d", strerror(err),
	      joined(group));
	err = ibv_destroy_qp(c->qp) ? errno : 0;
	check("a QP still attached is not destroyed (EBUSY, ib_uverbs)",
	      err == EBUSY, "%s", strerror(err));
	err = ibv_detach_mcast(c->qp, &mgid, 0);
	check("the last QP detaches, and the netdev leaves the group",
	      !err && !joined(group), "%s, joined %d", strerror(err),
	      joined(group));
	ud_free(c);
	ibv_destroy_ah(ah);
	ud_free(a);
	ud_free(b);
	ud_free(s);
}

/* The group's next address: GROUP with its last byte (IPv4: 2 bytes) i. */
static void group_n(const char *group, int i, union ibv_gid *gid)
{
	gid_of(group, gid);
	gid->raw[14] = (uint8_t)(i >> 8);
	gid->raw[15] = (uint8_t)i;
}

/* The address of a GID, as ip maddr prints it. */
static const char *gid_str(const union ibv_gid *gid, char *s, size_t len)
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(gid->raw, v4, sizeof(v4)))
		return inet_ntop(AF_INET, gid->raw + 12, s, len);
	return inet_ntop(AF_INET6, gid->raw, s, len);
}

static void limits(const char *group)
{
	struct ud *q[MCG_QPS + 1], *one;
	union ibv_gid mgid, g;
	char other[64];
	int i, err = 0;

	gid_of(group, &mgid);
	for (i = 0; i <= MCG_QPS; i++)
		q[i] = ud_new(QKEY);
	for (i = 0; i < MCG_QPS && !err; i++)
		err = ibv_attach_mcast(q[i]->qp, &mgid, 0);
	check("32 QPs attach to one group", !err, "QP %d: %s", i,
	      strerror(err));
	err = ibv_attach_mcast(q[MCG_QPS]->qp, &mgid, 0);
	check("a 33rd is ENOMEM", err == ENOMEM, "%s", strerror(err));

	one = q[MCG_QPS];
	err = 0;
	for (i = 1; i < MAX_MCG && !err; i++) {
		group_n(group, 0x100 + i, &g);
		err = ibv_attach_mcast(one->qp, &g, 0);
	}
	check("127 groups more take a QP each", !err, "group %d: %s", i,
	      strerror(err));
	group_n(group, 0x100 + MAX_MCG, &g);
	err = ibv_attach_mcast(one->qp, &g, 0);
	check("a 129th group is ENOMEM", err == ENOMEM, "%s", strerror(err));
	group_n(group, 0x101, &g);
	err = ibv_detach_mcast(one->qp, &g, 0) ?:
	      ibv_attach_mcast(one->qp, &g, 0);
	check("after one group went, a group can be made again", !err, "%s",
	      strerror(err));
	group_n(group, 0x100 + MAX_MCG - 1, &g);
	gid_str(&g, other, sizeof(other));
	check("the netdev joined the last group too", joined(other),
	      "%s not in ip maddr", other);
	err = 0;
	for (i = 0; i < MCG_QPS && !err; i++)
		err = ibv_detach_mcast(q[i]->qp, &mgid, 0);
	for (i = 1; i < MAX_MCG && !err; i++) {
		group_n(group, 0x100 + i, &g);
		err = ibv_detach_mcast(one->qp, &g, 0);
	}
	check("every QP detaches from every group, and the netdev leaves them",
	      !err && !joined(group) && !joined(other), "%s; %s %d, %s %d",
	      strerror(err), group, joined(group), other, joined(other));
	for (i = 0; i < MCG_QPS; i++)
		ud_free(q[i]);
	/* The last QP stays attached, for the process's exit to detach. */
	err = ibv_attach_mcast(one->qp, &mgid, 0);
	check("a QP attaches to the group for the exit", !err, "%s",
	      strerror(err));
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	int i, n;

	if (argc < 5) {
		fprintf(stderr, "usage: %s DEV NETDEV MY_IP GROUP [--limits]\n",
			argv[0]);
		return 2;
	}
	netdev = argv[2];
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "# cannot open %s\n", argv[1]);
		return 2;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		return 2;
	traffic(argv[3], argv[4]);
	if (argc > 5 && !strcmp(argv[5], "--limits")) {
		limits(argv[4]);
		printf("# %d failed; exiting with a QP attached\n", failed);
		return failed ? 1 : 0;
	}
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("# %d failed\n", failed);
	return failed ? 1 : 0;
}
