/*
 * The Makefile's DPDK rebuild rule (DPDK_STAMP: $(B)/.dpdk-yes or
 * .dpdk-no, a prerequisite of every bench object): when DPDK's development
 * files appear or go, or the stamp is touched, the bench objects are out of
 * date.  Without it, `make bench` installed libdpdk-dev and then found
 * "Nothing to be done", and the DPDK rows were missing.
 *
 * No build: make runs with -q (is it up to date?) and -n (what would it
 * run?) on one bench object, in a temporary build directory (B=...) whose
 * object and stamp are empty files with chosen times.  pkg-config is a
 * script written here that reports libdpdk only while a marker file exists,
 * so the test does not depend on what this machine has installed.  No root.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gso_test.h"

#define MAKE_DEADLINE_S 20

static char dir[64];

/* The files of the test, under dir. */
static struct {
	char b[96], stamp_yes[128], stamp_no[128], obj[160], pkg_config[96], installed[96], out[96];
} f;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *fp = fopen(path, "w");

	cr_assert_not_null(fp, "%s: %s", path, strerror(errno));
	fputs(text, fp);
	cr_assert_eq(fclose(fp), 0);
	cr_assert_eq(chmod(path, mode), 0);
}

static void setup(void)
{
	char script[512], d[160];

	snprintf(dir, sizeof(dir), "/tmp/gso-make-dpdk-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(f.b, sizeof(f.b), "%s/b", dir);
	snprintf(f.stamp_yes, sizeof(f.stamp_yes), "%s/.dpdk-yes", f.b);
	snprintf(f.stamp_no, sizeof(f.stamp_no), "%s/.dpdk-no", f.b);
	snprintf(f.obj, sizeof(f.obj), "%s/obj/bench/bench_csum.o", f.b);
	snprintf(f.pkg_config, sizeof(f.pkg_config), "%s/pkg-config", dir);
	snprintf(f.installed, sizeof(f.installed), "%s/dpdk-installed", dir);
	snprintf(f.out, sizeof(f.out), "%s/make.out", dir);
	snprintf(d, sizeof(d), "mkdir -p '%s/obj/bench'", f.b);
	cr_assert_eq(system(d), 0);
	/* A pkg-config that knows only libdpdk, and that only while the marker exists. */
	snprintf(script, sizeof(script),
		 "#!/bin/sh\n"
		 "[ -e '%s' ] || exit 1\n"
		 "case \" $* \" in *' libdpdk '*) ;; *) exit 1 ;; esac\n"
		 "case \" $* \" in *' --cflags '*) echo -I/nonexistent/dpdk ;; *) echo -lrte_eal ;; esac\n",
		 f.installed);
	write_file(f.pkg_config, script, 0755);
}

static void teardown(void)
{
	if (dir[0])
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	dir[0] = 0;
}

TestSuite(make_dpdk, .init = setup, .fini = teardown);

static void dpdk_installed(bool yes)
{
	if (yes)
		write_file(f.installed, "", 0644);
	else
		cr_assert(unlink(f.installed) == 0 || errno == ENOENT);
}

/* Set a file's modification time to now + ago_s (negative: in the past); create it if needed. */
static void stamp(const char *path, int ago_s)
{
	struct timespec now, ts[2];
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	close(fd);
	clock_gettime(CLOCK_REALTIME, &now);
	ts[0] = ts[1] = (struct timespec){ .tv_sec = now.tv_sec + ago_s };
	cr_assert_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/*
 * make FLAG B=dir/b PKG_CONFIG=dir/pkg-config dir/b/obj/bench/bench_csum.o
 * in the source tree; its exit status, its output in dir/make.out.  Killed
 * past the deadline.  MAKEFLAGS from a surrounding make (jobserver, -s) is
 * dropped so that the child's answer is its own.
 */
static int run_make(const char *flag)
{
	char bdir[128], pkg[128];
	int status = -1;
	pid_t pid;

	snprintf(bdir, sizeof(bdir), "B=%s", f.b);
	snprintf(pkg, sizeof(pkg), "PKG_CONFIG=%s", f.pkg_config);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int fd = open(f.out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		unsetenv("MAKEFLAGS");
		unsetenv("MFLAGS");
		unsetenv("MAKELEVEL");
		execlp("make", "make", "-C", GSO_SRC_DIR, "--no-print-directory", flag, bdir, pkg, f.obj,
		       (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < MAKE_DEADLINE_S * 100; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		cr_assert_eq(r, 0);
		usleep(10000);
	}
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		cr_assert_fail("make %s did not finish in %d s", flag, MAKE_DEADLINE_S);
	}
	cr_assert(WIFEXITED(status), "make %s: status %#x", flag, status);
	cr_assert_neq(WEXITSTATUS(status), 127, "make not found");
	return WEXITSTATUS(status);
}

/* What `make -n` prints for the object (read from dir/make.out). */
static const char *dry_run(void)
{
	static char out[16384];
	FILE *fp;
	size_t n;

	cr_assert_eq(run_make("-n"), 0, "make -n failed");
	fp = fopen(f.out, "r");
	cr_assert_not_null(fp);
	n = fread(out, 1, sizeof(out) - 1, fp);
	out[n] = 0;
	fclose(fp);
	return out;
}

/* make -q: 0 when the object is up to date, 1 when it would be rebuilt. */
static bool up_to_date(void)
{
	int rc = run_make("-q");

	cr_assert(rc == 0 || rc == 1, "make -q exit %d", rc);
	return rc == 0;
}

/* The object as built with (or without) DPDK: newer than that state's stamp and its source. */
static void built(bool with_dpdk)
{
	dpdk_installed(with_dpdk);
	stamp(with_dpdk ? f.stamp_yes : f.stamp_no, -2);
	stamp(f.obj, -1);
	cr_assert(up_to_date(), "nothing changed, yet make would rebuild:\n%s", dry_run());
}

/* Built in one DPDK state, then DPDK appears or goes: the object is rebuilt, for the new state. */
static void flip(bool before)
{
	const char *plan;

	built(before);
	dpdk_installed(!before);
	cr_assert_not(up_to_date(), "DPDK %s but the bench object counts as up to date",
		      before ? "went" : "appeared");
	plan = dry_run();
	cr_assert_not_null(strstr(plan, before ? ".dpdk-no" : ".dpdk-yes"), "the stamp is not remade:\n%s", plan);
	cr_assert_not_null(strstr(plan, "bench/bench_csum.c"), "the object is not recompiled:\n%s", plan);
	if (before) {
		cr_assert_null(strstr(plan, "-DHAVE_DPDK"), "recompiled with DPDK after it went:\n%s", plan);
	} else {
		cr_assert_not_null(strstr(plan, "-DHAVE_DPDK"), "recompiled without DPDK:\n%s", plan);
		cr_assert_not_null(strstr(plan, "-isystem /nonexistent/dpdk"), "without DPDK's cflags:\n%s", plan);
	}
}

Test(make_dpdk, appears)
{
	flip(false);
}

Test(make_dpdk, goes)
{
	flip(true);
}

/* The same DPDK state, but its stamp is touched (newer than the object): rebuild. */
Test(make_dpdk, touched)
{
	for (int with = 0; with < 2; with++) {
		built(with);
		stamp(with ? f.stamp_yes : f.stamp_no, 0);
		cr_assert_not(up_to_date(), "the %s stamp is newer than the bench object, which counts as up to date",
			      with ? "DPDK" : "no-DPDK");
		cr_assert_not_null(strstr(dry_run(), "bench/bench_csum.c"), "the object is not recompiled");
	}
}
