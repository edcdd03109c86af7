/*
 * The shared namespace test-bed (tests/nsbed/nsbed.h) keeps its rules:
 * names carry the run id, the tests' addresses are on the veths, a command
 * may hold any character (it is passed, not quoted), the names go with
 * nsbed_destroy() and, through the watchdog, when the creating process is
 * killed; an anonymous bed keeps working without names.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gso_test.h"

static bool has_name(const char *ns)
{
	char path[128];

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	return access(path, F_OK) == 0;
}

/* Wait up to 10 s for a name to go. */
static bool name_goes(const char *ns)
{
	for (int i = 0; i < 200; i++) {
		if (!has_name(ns))
			return true;
		nanosleep(&(struct timespec){ .tv_nsec = 50000000 }, NULL);
	}
	return false;
}

Test(nsbed, tests_bed_names_addresses_quoting)
{
	const char *run = getenv("GSO_TEST_RUN_ID");
	char prefix[64], names[2][48];
	struct nsbed tb;

	gso_test_require_root();
	cr_assert_eq(gso_testbed_create(&tb), 0);
	snprintf(prefix, sizeof(prefix), "gsot%s-%d-", run && *run ? run : "x", (int)getpid());
	cr_assert_eq(strncmp(tb.ns[0], prefix, strlen(prefix)), 0, "%s", tb.ns[0]);
	cr_assert(has_name(tb.ns[0]) && has_name(tb.ns[1]));
	cr_assert_str_eq(tb.ifname[0], "gva");
	cr_assert_gt(tb.ifindex[1], 0);
	cr_assert_eq(nsbed_sh(&tb, 0, "ip -4 addr show dev gva | grep -q 10.77.0.1/24 && "
				      "ip -6 addr show dev gva | grep -q fd77::1/64"), 0);
	cr_assert_eq(nsbed_sh(&tb, 1, "ip -4 addr show dev gvb | grep -q 10.77.0.2/24"), 0);
	/* Single and double quotes, $ and a long command: all reach sh as written. */
	cr_assert_eq(nsbed_sh(&tb, 0, "test \"$(echo 'it'\"'\"'s')\" = \"it's\""), 0);
	cr_assert_eq(nsbed_sh(&tb, 0, "x='%0*d'; test ${#x} -eq 3000", 3000, 7), 0);
	cr_assert_eq(nsbed_sh(&tb, 1, "exit 3"), 3);
	/* ip netns exec: the command sees the side's own /sys. */
	cr_assert_eq(nsbed_sh(&tb, 1, "test -e /sys/class/net/gvb && ! test -e /sys/class/net/gva"), 0);
	memcpy(names, tb.ns, sizeof(names));
	nsbed_destroy(&tb);
	cr_assert_not(has_name(names[0]) || has_name(names[1]));
	nsbed_destroy(&tb); /* idempotent */
}

Test(nsbed, watchdog_removes_names_of_a_killed_process)
{
	char names[2][48];
	int p[2];
	pid_t pid;

	gso_test_require_root();
	cr_assert_eq(pipe(p), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		struct nsbed tb;

		close(p[0]);
		if (gso_testbed_create(&tb))
			_exit(1);
		if (write(p[1], tb.ns, sizeof(names)) != (ssize_t)sizeof(names))
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	cr_assert_eq(read(p[0], names, sizeof(names)), (ssize_t)sizeof(names));
	close(p[0]);
	cr_assert(has_name(names[0]) && has_name(names[1]));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert(name_goes(names[0]) && name_goes(names[1]), "%s left behind", names[0]);
}

Test(nsbed, anonymous_bed_works_without_names)
{
	const struct nsbed_opts o = {
		.tag = "t",
		.ip4 = { "10.78.0.1/24", "10.78.0.2/24" },
		.no_ipv6 = true,
		.static_neigh = true,
		.queues = 2,
		.setup = { "ip link set gva mtu 1400", NULL },
		.anonymous = true,
	};
	struct nsbed b;

	gso_test_require_root();
	cr_assert_eq(nsbed_create(&b, &o), 0);
	cr_assert_eq(b.ns[0][0], '\0');
	cr_assert_str_eq(b.ip[1], "10.78.0.2");
	cr_assert_eq(nsbed_sh(&b, 0, "ip neigh show 10.78.0.2 | grep -q PERMANENT"), 0);
	cr_assert_eq(nsbed_sh(&b, 1, "ip -4 addr show dev gvb | grep -q '%s/24'", b.ip[1]), 0);
	cr_assert_eq(nsbed_sh(&b, 1, "test \"$(cat /proc/sys/net/ipv6/conf/all/disable_ipv6)\" = 1"), 0);
	cr_assert_eq(nsbed_sh(&b, 1, "ip -d link show gvb | grep -q 'numtxqueues 2 numrxqueues 2'"), 0);
	/* The setup command ran, in side 0. */
	cr_assert_eq(nsbed_sh(&b, 0, "ip link show gva | grep -q 'mtu 1400 '"), 0);
	nsbed_destroy(&b);
	cr_assert_eq(nsbed_sh(&b, 0, "true"), -EBADF);
}
