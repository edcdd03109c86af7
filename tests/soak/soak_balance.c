/*
 * The process's balance (soak.h): what a leak would make grow.
 * Descriptors and threads are counted exactly; RSS and the heap move a
 * little with the allocator's arenas and caches, so they get a slack.
 */
#include <dirent.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "soak.h"

/* Entries of a /proc directory, "." and ".." not counted. */
static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

void soak_balance_now(struct soak_balance *b)
{
	unsigned long size = 0, res = 0;
	struct mallinfo2 mi = mallinfo2();
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	/* Count after fopen's descriptor is closed again. */
	b->fds = count_dir("/proc/self/fd") - 1; /* less opendir's own */
	b->tasks = count_dir("/proc/self/task");
	b->rss = (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
	b->heap = mi.uordblks + mi.hblkhd;
}

bool soak_balance_ok(const struct soak_balance *base, const struct soak_balance *now, uint64_t slack,
		     char *why, size_t len)
{
	size_t o = 0;

	why[0] = 0;
	if (now->fds != base->fds)
		o += (size_t)snprintf(why + o, len - o, "descriptors %d, %d at the baseline; ", now->fds, base->fds);
	if (o < len && now->tasks != base->tasks)
		o += (size_t)snprintf(why + o, len - o, "threads %d, %d at the baseline; ", now->tasks,
				      base->tasks);
	if (o < len && now->rss > base->rss + slack)
		o += (size_t)snprintf(why + o, len - o, "RSS %llu KiB, %llu KiB at the baseline (slack %llu KiB); ",
				      (unsigned long long)(now->rss >> 10), (unsigned long long)(base->rss >> 10),
				      (unsigned long long)(slack >> 10));
	if (o < len && now->heap > base->heap + slack)
		o += (size_t)snprintf(why + o, len - o, "heap %llu KiB, %llu KiB at the baseline (slack %llu KiB); ",
				      (unsigned long long)(now->heap >> 10), (unsigned long long)(base->heap >> 10),
				      (unsigned long long)(slack >> 10));
	if (o >= 2 && o < len)
		why[o - 2] = 0; /* the last "; " */
	return o == 0;
}
