/* conftool's parts: case selection (conftool.c), send, compare. */
#ifndef GSO_CONFTOOL_H
#define GSO_CONFTOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "conf_cases.h"

#define CONFTOOL_DEFAULT_RANDOM 200u

/* Which cases: the same options give the same cases, numbers and bytes. */
struct conftool_sel {
	uint64_t seed;
	unsigned random;    /* random cases after the table */
	int small;          /* < 0: no small-MSS set; else its random count */
	bool no_table;      /* leave the table's cases out (they are still drawn) */
	unsigned protos;    /* bit per CONF_TCP4 ... */
	uint32_t mtu;       /* 0: no limit; else largest IP packet of a case */
	uint8_t src_mac[6];
};

struct conftool_send {
	const char *ifname;
	const char *backend; /* "vnet", "e1000", "kernel" */
	unsigned wait_ms;    /* longest wait per case for the interface's TX counter */
	unsigned gap_us;     /* pause after each case */
};

struct conftool_cmp {
	bool strict; /* tolerated differences count as mismatches */
	unsigned show; /* differences printed per capture */
};

/* All cases of the seed (all) and the selected ones, numbers kept (out).  0 or -errno. */
int conftool_cases(const struct conftool_sel *sel, struct conf_set *all, struct conf_set *out);
void conftool_print_selection(FILE *f, const struct conftool_sel *sel, const struct conf_set *cs);

/* The subcommands; each returns the exit status (TOOL_EXIT_*). */
int conftool_send(const struct conftool_send *o, const struct conftool_sel *sel,
		  const struct conf_set *cs);
int conftool_compare(const struct conftool_cmp *o, int argc, char **argv);

#endif
