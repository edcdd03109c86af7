/*
 * A Criterion runner for the ThreadSanitizer build ($(B)/tsan, see the
 * Makefile): it runs the binary's Test()s one after the other in this
 * process, in place of libcriterion, which is not linked.
 *
 * Why: Criterion 2.4's runner maps its shared arena (boxfort) with
 * MAP_FIXED at random addresses, which TSan's mmap interceptor refuses
 * outside its application ranges ("Could not initialize inheritable
 * arena" about 4 runs in 5, gcc 12 and clang 14 alike), and the runs that
 * get past it crashed in the runner.  The tests themselves only need the
 * calls below: their assertions, skip, and the suites' and tests' init
 * and fini.
 *
 * Each test (each parameter of a ParameterizedTest): suite init, test
 * init, the test, test fini, suite fini, as Criterion orders them; a failed assertion ends the test (longjmp to its
 * fini), as does a skip.  .timeout ends the whole run (alarm): there is no
 * process per test to kill.  Tests run in (suite, name) order; --filter
 * takes a glob of "suite/name".  Exit status 0 when no test failed.
 */
#include <criterion/criterion.h>
#include <criterion/options.h>
#include <criterion/parameterized.h>
#include <criterion/stats.h>
#include <fnmatch.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The sections Test() and TestSuite() put their descriptors in (named by the linker). */
extern struct criterion_test *__start_cr_tst[], *__stop_cr_tst[];
extern struct criterion_suite *__start_cr_sts[] __attribute__((weak)), *__stop_cr_sts[] __attribute__((weak));

struct criterion_options criterion_options; /* all 0: only failed assertions are sent */

static struct criterion_test *cur;
static struct criterion_suite *cur_suite;
static void *cur_param; /* a ParameterizedTest's parameter of this run */
static jmp_buf *abort_to;
static bool failed, skipped;

void criterion_send_assert(struct criterion_assert_stats *s)
{
	if (s->passed)
		return;
	failed = true;
	fprintf(stderr, "  %s:%u: assertion failed: %s\n", s->file, s->line,
		s->message && *s->message ? s->message : "(no message)");
}

void cri_asserts_passed_incr(void)
{
}

void criterion_abort_test(void)
{
	longjmp(*abort_to, 1);
}

void criterion_continue_test(void)
{
}

void criterion_skip_test(const char *fmt, ...)
{
	va_list ap;

	skipped = true;
	fprintf(stderr, "  skipped: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	longjmp(*abort_to, 1);
}

/* Criterion's default text for an assertion without a message of its own: the test's line says enough. */
char *cr_translate_assert_msg(int msg_index, ...)
{
	(void)msg_index;
	return strdup("");
}

int cr_asprintf(char **strp, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(strp, fmt, ap);
	va_end(ap);
	return n;
}

void cr_asprintf_free(char *buf)
{
	free(buf);
}

void criterion_internal_test_setup(void)
{
	if (cur_suite && cur_suite->data->init)
		cur_suite->data->init();
	if (cur->data->init)
		cur->data->init();
}

/* An assertion in the test itself comes back here, so that the fini still runs (as in Criterion). */
void criterion_internal_test_main(void (*fn)(void))
{
	jmp_buf here, *outer = abort_to;

	abort_to = &here;
	if (!setjmp(here)) {
		if (cur->data->kind_ == CR_TEST_PARAMETERIZED)
			((void (*)(void *))fn)(cur_param);
		else
			fn();
	}
	abort_to = outer;
}

void criterion_internal_test_teardown(void)
{
	if (cur->data->fini)
		cur->data->fini();
	if (cur_suite && cur_suite->data->fini)
		cur_suite->data->fini();
}

static void on_alarm(int sig)
{
	static const char msg[] = "  timed out: the run ends here\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* Nothing more to say it with. */
	}
	_exit(1);
}

static struct criterion_suite *suite_of(const struct criterion_test *t)
{
	for (struct criterion_suite **s = __start_cr_sts; s && s < __stop_cr_sts; s++)
		if (*s && !strcmp((*s)->name, t->category))
			return *s;
	return NULL;
}

static int by_name(const void *a, const void *b)
{
	const struct criterion_test *x = *(struct criterion_test *const *)a, *y = *(struct criterion_test *const *)b;
	int c = strcmp(x->category, y->category);

	return c ? c : strcmp(x->name, y->name);
}

/* An assertion in an init or a fini ends the test here. */
static void run_one(void)
{
	jmp_buf outer;

	abort_to = &outer;
	if (!setjmp(outer))
		cur->test();
}

int main(int argc, char **argv)
{
	size_t n = (size_t)(__stop_cr_tst - __start_cr_tst), ran = 0, nfail = 0, nskip = 0;
	struct criterion_test **tests = calloc(n + 1, sizeof(*tests));
	const char *filter = "*";

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--filter") && i + 1 < argc)
			filter = argv[++i];
		else if (!strncmp(argv[i], "--filter=", 9))
			filter = argv[i] + 9;
		else {
			fprintf(stderr, "usage: %s [--filter GLOB]   (GLOB over suite/test)\n", argv[0]);
			return 2;
		}
	}
	if (!tests)
		return 2;
	memcpy(tests, __start_cr_tst, n * sizeof(*tests));
	qsort(tests, n, sizeof(*tests), by_name);
	signal(SIGALRM, on_alarm);
	for (size_t i = 0; i < n; i++) {
		struct criterion_test_params par = { .size = 0, .params = NULL, .length = 1 };
		char id[256];

		cur = tests[i];
		if (!cur)
			continue;
		snprintf(id, sizeof(id), "%s/%s", cur->category, cur->name);
		if (fnmatch(filter, id, 0) || cur->data->disabled)
			continue;
		cur_suite = suite_of(cur);
		if (cur->data->kind_ == CR_TEST_PARAMETERIZED)
			par = cur->data->param_();
		/* Once per parameter, as Criterion does (once for a plain test). */
		for (size_t k = 0; k < par.length; k++) {
			struct timespec t0, t1;
			double timeout = cur->data->timeout ? cur->data->timeout : cur_suite ? cur_suite->data->timeout : 0;

			cur_param = (char *)par.params + k * par.size;
			failed = skipped = false;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			alarm(timeout > 0 ? (unsigned)timeout + 1 : 0);
			run_one();
			alarm(0);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			ran++;
			nfail += failed;
			nskip += skipped && !failed;
			fprintf(stderr, "[%s] %s%s (%.2f s)\n", failed ? "FAIL" : skipped ? "SKIP" : "PASS", id,
				par.size ? "[param]" : "",
				(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
		}
		if (par.cleanup)
			par.cleanup(&par);
	}
	fprintf(stderr, "Tested: %zu | Passing: %zu | Failing: %zu | Skipped: %zu\n", ran, ran - nfail - nskip, nfail,
		nskip);
	free(tests);
	return nfail ? 1 : 0;
}
