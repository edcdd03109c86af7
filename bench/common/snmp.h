/*
 * Network-namespace-wide counters from /proc/net/snmp and /proc/net/netstat
 * ("Tcp.InSegs", "IpExt.InNoECTPkts", "TcpExt.TCPOFOQueue", ...).  Benches
 * run in namespaces of their own, so a delta over a run is the run's
 * traffic (plus the odd ARP/ND packet).
 *
 * Useful pairs:
 *   Ip.InReceives           packets the IP layer received: a GRO/GSO
 *                           super-packet counts once
 *   IpExt.In{NoECT,ECT0,ECT1,CE}Pkts  the same traffic counted in segments
 *                           (gso_segs), so their ratio is the mean number of
 *                           segments per received packet
 *   Ip.OutRequests vs Tcp.OutSegs    the sending side's equivalent: TSO/GSO
 *                           super-packets handed down vs segments
 *   Tcp.RetransSegs         retransmitted segments
 */
#ifndef BENCH_SNMP_H
#define BENCH_SNMP_H

#include <stdint.h>

#define BENCH_SNMP_MAX 1024

struct bench_snmp {
	unsigned n;
	struct {
		char name[64];
		int64_t val;
	} e[BENCH_SNMP_MAX];
};

/* Read both files of the calling thread's namespace.  Returns 0 or -errno. */
int bench_snmp_read(struct bench_snmp *s);
/* Value of "Group.Name", or -1 when absent. */
int64_t bench_snmp_get(const struct bench_snmp *s, const char *name);
/* b - a for "Group.Name", 0 when absent in either. */
int64_t bench_snmp_delta(const struct bench_snmp *a, const struct bench_snmp *b, const char *name);

#endif
