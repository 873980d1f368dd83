// SPDX-License-Identifier: GPL-2.0
/*
 * tbprof: a QEMU TCG plugin that counts the guest instructions executed
 * at every guest address where a translation block starts, and writes
 * the counts out when the guest asks for a snapshot.
 *
 * Under TCG the time a guest spends is close to the number of guest
 * instructions it executes, and that number does not depend on how
 * busy the host is. perf inside a TCG guest cannot sample it (it sees
 * the idle loop), so this counts from outside instead: each block adds
 * its instruction count to its start address's counter, inline in the
 * translated code, with no callback per execution. A block starts in
 * one function and ends at its first jump, call or return, so its start
 * address names the function its instructions belong to.
 *
 *   qemu-system-x86_64 ... -plugin tbprof.so,out=DIR
 *
 * A thread polls DIR/tbprof.cmd every 20 ms. When it holds a NAME
 * (letters, digits, '-', '_', '.'), the thread removes it, writes every
 * nonzero counter as "ADDRESS COUNT" lines (hexadecimal, decimal) to
 * DIR/tbprof-NAME.txt and creates DIR/tbprof-NAME.done. The counts are
 * cumulative since the guest started; the difference of two snapshots is
 * the profile of what ran between them (bench/prof/report.py). Beside
 * it, DIR/tbprof-NAME.threads has the host's CPU time of each of QEMU's
 * threads (vCPUs, main loop, workers) and the monotonic clock, so that
 * the report can say which thread the host kept busy. Counters
 * are read while vCPUs write them: a snapshot may miss the last few
 * blocks, which a profile of seconds does not see.
 *
 * Addresses of user space (below the kernel's half) of every process
 * share the table; the report counts them as one.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct tb_count {
	uint64_t addr;
	uint64_t insns;
};

/* Counters live in chunks that never move: translated code points at them. */
#define CHUNK_COUNTS	65536
#define TABLE_BITS	22
#define TABLE_SIZE	(1u << TABLE_BITS)

static struct tb_count **chunks;
static size_t nr_chunks, used_in_chunk = CHUNK_COUNTS;
static struct tb_count **table;	/* open addressing by address */
static size_t nr_counts;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char out_dir[4096];

static size_t slot_of(uint64_t addr)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> (64 - TABLE_BITS));
}

/* The counter of @addr, made on first sight; NULL when full. Under lock. */
static struct tb_count *count_of(uint64_t addr)
{
	size_t i = slot_of(addr);
	struct tb_count *c;

	while (table[i]) {
		if (table[i]->addr == addr)
			return table[i];
		i = (i + 1) & (TABLE_SIZE - 1);
	}
	if (nr_counts >= TABLE_SIZE / 2)
		return NULL;
	if (used_in_chunk == CHUNK_COUNTS) {
		struct tb_count **more, *chunk;

		chunk = calloc(CHUNK_COUNTS, sizeof(*chunk));
		more = realloc(chunks, (nr_chunks + 1) * sizeof(*chunks));
		if (!chunk || !more) {
			free(chunk);
			if (more)
				chunks = more;
			return NULL;
		}
		chunks = more;
		chunks[nr_chunks++] = chunk;
		used_in_chunk = 0;
	}
	c = &chunks[nr_chunks - 1][used_in_chunk++];
	c->addr = addr;
	table[i] = c;
	nr_counts++;
	return c;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct tb_count *c;

	(void)id;
	pthread_mutex_lock(&lock);
	c = count_of(qemu_plugin_tb_vaddr(tb));
	pthread_mutex_unlock(&lock);
	if (c)
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							 &c->insns,
							 qemu_plugin_tb_n_insns(tb));
}

/* "clock SECONDS" and, per thread of this QEMU, "TID COMM UTIME STIME" (ticks). */
static void write_threads(FILE *out)
{
	char path[300], buf[1024], *comm, *end;
	unsigned long utime, stime;
	struct timespec now;
	struct dirent *de;
	DIR *dir;
	FILE *f;

	clock_gettime(CLOCK_MONOTONIC, &now);
	fprintf(out, "clock %ld.%09ld %ld\n", (long)now.tv_sec, now.tv_nsec, sysconf(_SC_CLK_TCK));
	dir = opendir("/proc/self/task");
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f)) {
			/* pid (comm) state ... utime(14) stime(15): comm may hold spaces. */
			comm = strchr(buf, '(');
			end = strrchr(buf, ')');
			if (comm && end && sscanf(end + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
						  &utime, &stime) == 2) {
				*end = '\0';
				for (char *c = comm + 1; *c; c++)
					if (*c == ' ')
						*c = '_';
				fprintf(out, "%s %s %lu %lu\n", de->d_name, comm + 1, utime, stime);
			}
		}
		fclose(f);
	}
	closedir(dir);
}

static int snapshot(const char *name)
{
	char path[4200], tmp[4300];
	size_t i, j, n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tbprof-%s.txt", out_dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	pthread_mutex_lock(&lock);
	for (i = 0; i < nr_chunks; i++) {
		n = i == nr_chunks - 1 ? used_in_chunk : CHUNK_COUNTS;
		for (j = 0; j < n; j++) {
			volatile struct tb_count *c = &chunks[i][j];
			uint64_t insns = c->insns;

			if (insns)
				fprintf(f, "%" PRIx64 " %" PRIu64 "\n", c->addr, insns);
		}
	}
	pthread_mutex_unlock(&lock);
	if (fclose(f) || rename(tmp, path))
		return -errno;
	snprintf(path, sizeof(path), "%s/tbprof-%s.threads", out_dir, name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	write_threads(f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/tbprof-%s.done", out_dir, name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fclose(f);
	return 0;
}

static int name_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9') && !strchr("-_.", *s))
			return 0;
	return 1;
}

static void *poller(void *arg)
{
	struct timespec nap = { .tv_nsec = 20 * 1000 * 1000 };
	char cmd[4200], name[256];

	(void)arg;
	snprintf(cmd, sizeof(cmd), "%s/tbprof.cmd", out_dir);
	for (;;) {
		FILE *f = fopen(cmd, "r");

		if (!f) {
			nanosleep(&nap, NULL);
			continue;
		}
		name[0] = '\0';
		if (fgets(name, sizeof(name), f))
			name[strcspn(name, "\r\n")] = '\0';
		fclose(f);
		/* Only a whole name: the guest writes the file in one go. */
		if (!name_ok(name)) {
			nanosleep(&nap, NULL);
			continue;
		}
		unlink(cmd);
		if (snapshot(name))
			fprintf(stderr, "tbprof: snapshot %s: %s\n", name, strerror(errno));
	}
	return NULL;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	pthread_t thread;
	int i;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			snprintf(out_dir, sizeof(out_dir), "%s", argv[i] + 4);
		else {
			fprintf(stderr, "tbprof: unknown argument '%s' (out=DIR)\n", argv[i]);
			return -1;
		}
	}
	if (!out_dir[0]) {
		fprintf(stderr, "tbprof: out=DIR is required\n");
		return -1;
	}
	table = calloc(TABLE_SIZE, sizeof(*table));
	if (!table)
		return -1;
	if (pthread_create(&thread, NULL, poller, NULL)) {
		free(table);
		return -1;
	}
	pthread_detach(thread);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
