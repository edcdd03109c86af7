/*
 * cost_probe --out FILE [--] PROG ARGS...: run PROG (its stdout and stderr
 * are ours, its exit status is ours) and write one JSON line to FILE with
 * what it cost, for bench/bench_frame_cost.sh:
 *
 *   - the child's rusage from wait4(): user and system CPU, voluntary and
 *     involuntary context switches (the whole process, all its threads);
 *   - the whole machine's CPU time over the child's life from /proc/stat
 *     (user, system, softirq, irq, all CPUs): on a veth the receiver's TCP
 *     input and our ACKs' XDP/AF_XDP receive run in softirq, partly in the
 *     sender's context, partly in the receiver's or ksoftirqd;
 *   - the machine's NET_RX / NET_TX softirq runs from /proc/softirqs;
 *   - the TCP counters of our network namespace (/proc/net/snmp): for
 *     kernel TCP, Tcp.OutSegs is its frames and Tcp.InSegs its ACKs.
 *
 * It measures around fork/exec/wait, so the numbers are PROG's own and not
 * those of whatever started us (ip netns exec, timeout).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "snmp.h"

/* /proc/stat's first line, in USER_HZ ticks, and the NET_RX/NET_TX totals. */
struct machine {
	unsigned long long user, nice, sys, idle, iowait, irq, softirq;
	unsigned long long net_rx, net_tx;
};

static unsigned long long softirq_sum(const char *name)
{
	FILE *f = fopen("/proc/softirqs", "r");
	char line[4096];
	unsigned long long sum = 0;
	size_t n = strlen(name);

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		while (*p == ' ')
			p++;
		if (strncmp(p, name, n) || p[n] != ':')
			continue;
		p += n + 1;
		for (;;) {
			unsigned long long v = strtoull(p, &end, 10);

			if (end == p)
				break;
			sum += v;
			p = end;
		}
	}
	fclose(f);
	return sum;
}

static void machine_read(struct machine *m)
{
	FILE *f = fopen("/proc/stat", "r");

	memset(m, 0, sizeof(*m));
	if (f) {
		if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &m->user, &m->nice, &m->sys, &m->idle,
			   &m->iowait, &m->irq, &m->softirq) != 7)
			memset(m, 0, sizeof(*m));
		fclose(f);
	}
	m->net_rx = softirq_sum("NET_RX");
	m->net_tx = softirq_sum("NET_TX");
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile pid_t child;

/* timeout(1) signals us: pass it on, and report when the child has gone. */
static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static double tv_s(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	struct machine m0, m1;
	struct bench_snmp *s0, *s1;
	struct rusage ru;
	struct bench_json j;
	double t0, t1, hz;
	int i = 1, status = 0;
	pid_t pid;
	FILE *f;

	if (argc > 2 && !strcmp(argv[1], "--out")) {
		out = argv[2];
		i = 3;
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (!out || i >= argc) {
		fprintf(stderr, "usage: cost_probe --out FILE [--] PROG ARGS...\n");
		return 2;
	}
	s0 = calloc(1, sizeof(*s0));
	s1 = calloc(1, sizeof(*s1));
	if (!s0 || !s1)
		return 2;
	hz = (double)sysconf(_SC_CLK_TCK);
	bench_snmp_read(s0);
	machine_read(&m0);
	t0 = wall_s();
	pid = fork();
	if (pid < 0) {
		perror("cost_probe: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[i], argv + i);
		fprintf(stderr, "cost_probe: %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	child = pid;
	signal(SIGTERM, forward);
	signal(SIGHUP, forward);
	signal(SIGINT, forward);
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("cost_probe: wait4");
			return 2;
		}
	}
	t1 = wall_s();
	machine_read(&m1);
	bench_snmp_read(s1);

	f = fopen(out, "w");
	if (!f) {
		perror(out);
	} else {
		bench_json_begin(&j, f);
		bench_json_str(&j, "tool", "cost_probe");
		bench_json_str(&j, "prog", argv[i]);
		bench_json_dbl(&j, "wall_s", t1 - t0);
		bench_json_dbl(&j, "user_s", tv_s(&ru.ru_utime));
		bench_json_dbl(&j, "sys_s", tv_s(&ru.ru_stime));
		bench_json_i64(&j, "nvcsw", ru.ru_nvcsw);
		bench_json_i64(&j, "nivcsw", ru.ru_nivcsw);
		bench_json_i64(&j, "maxrss_kb", ru.ru_maxrss);
		bench_json_dbl(&j, "machine_user_s", (double)(m1.user + m1.nice - m0.user - m0.nice) / hz);
		bench_json_dbl(&j, "machine_sys_s", (double)(m1.sys - m0.sys) / hz);
		bench_json_dbl(&j, "machine_softirq_s", (double)(m1.softirq - m0.softirq) / hz);
		bench_json_dbl(&j, "machine_irq_s", (double)(m1.irq - m0.irq) / hz);
		bench_json_dbl(&j, "machine_idle_s", (double)(m1.idle + m1.iowait - m0.idle - m0.iowait) / hz);
		bench_json_u64(&j, "net_rx_softirqs", m1.net_rx - m0.net_rx);
		bench_json_u64(&j, "net_tx_softirqs", m1.net_tx - m0.net_tx);
		bench_json_i64(&j, "tcp_out_segs", bench_snmp_delta(s0, s1, "Tcp.OutSegs"));
		bench_json_i64(&j, "tcp_in_segs", bench_snmp_delta(s0, s1, "Tcp.InSegs"));
		bench_json_i64(&j, "exit", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		bench_json_end(&j);
		fclose(f);
	}
	free(s0);
	free(s1);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
