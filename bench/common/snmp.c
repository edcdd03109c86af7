#include "snmp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The files alternate a line of names and a line of values per group. */
static int read_file(struct bench_snmp *s, const char *path)
{
	char names[8192], vals[8192];
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (fgets(names, sizeof(names), f) && fgets(vals, sizeof(vals), f)) {
		char *sn, *sv, *n, *v, *grp;
		char *colon = strchr(names, ':');

		if (!colon || strncmp(names, vals, (size_t)(colon - names + 1)))
			continue;
		*colon = 0;
		grp = names;
		n = strtok_r(colon + 1, " \n", &sn);
		v = strtok_r(strchr(vals, ':') + 1, " \n", &sv);
		while (n && v && s->n < BENCH_SNMP_MAX) {
			/* Precision-bounded: names longer than the slot are cut. */
			snprintf(s->e[s->n].name, sizeof(s->e[s->n].name), "%.20s.%.40s", grp, n);
			s->e[s->n].val = strtoll(v, NULL, 10);
			s->n++;
			n = strtok_r(NULL, " \n", &sn);
			v = strtok_r(NULL, " \n", &sv);
		}
	}
	fclose(f);
	return 0;
}

int bench_snmp_read(struct bench_snmp *s)
{
	int err;

	s->n = 0;
	err = read_file(s, "/proc/self/net/snmp");
	if (!err)
		err = read_file(s, "/proc/self/net/netstat");
	return err;
}

int64_t bench_snmp_get(const struct bench_snmp *s, const char *name)
{
	for (unsigned i = 0; i < s->n; i++)
		if (!strcmp(s->e[i].name, name))
			return s->e[i].val;
	return -1;
}

int64_t bench_snmp_delta(const struct bench_snmp *a, const struct bench_snmp *b, const char *name)
{
	int64_t x = bench_snmp_get(a, name), y = bench_snmp_get(b, name);

	return x < 0 || y < 0 ? 0 : y - x;
}
