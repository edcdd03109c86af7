/*
 * The NULL-argument tables of test_null_*.c: every GSO_API function, called
 * with NULL for each of its pointer parameters (and with zero or all-ones
 * sizes, counts and indices where the header says what they do), each
 * call's result checked against what the header promises.  The rule the
 * headers follow is written once in CONTRIBUTING.md ("C8 errors").
 *
 * A table is written as a list of rows in an X-macro, so that one list
 * makes both the functions that make the calls and the table itself:
 *
 *   R(fn, arg, expr, want)  call: `expr` (a call of fn with `arg` NULL or
 *                           odd, every other argument valid) must give
 *                           `want`; `arg` is the parameter's name in the
 *                           header for a NULL pointer, or a label such as
 *                           len0 for another odd value
 *   C(fn, arg, why)         contract: the header says `arg` must not be
 *                           NULL (a pure function with no error to
 *                           return); not called
 *   N(fn, arg, why)         needs what unit tests lack (root, an
 *                           interface, a BPF program) to get a valid
 *                           handle for the other arguments; not called
 *
 * test_null_args.c checks that the tables together name every GSO_API
 * function of the public headers and, for each, every pointer parameter.
 */
#ifndef NULL_ARGS_H
#define NULL_ARGS_H

#include <criterion/parameterized.h>
#include <stdint.h>

enum nullarg_kind { NULLARG_CALL, NULLARG_CONTRACT, NULLARG_NEEDS };

struct nullarg {
	const char *fn;
	const char *arg;
	int kind;              /* enum nullarg_kind */
	int64_t (*call)(void); /* NULLARG_CALL: makes the call, returns its result */
	int64_t want;          /* NULLARG_CALL: what the header promises */
	const char *why;       /* the others: why it is not called */
};

/* One expansion of a row list makes the calls, the other the table. */
#define NULLARG_FN_R(fn, arg, expr, want) \
	static int64_t nullarg_##fn##_##arg(void) { return (int64_t)(expr); }
#define NULLARG_FN_C(fn, arg, why)
#define NULLARG_ROW_R(fn, arg, expr, want) { #fn, #arg, NULLARG_CALL, nullarg_##fn##_##arg, (int64_t)(want), 0 },
#define NULLARG_ROW_C(fn, arg, why) { #fn, #arg, NULLARG_CONTRACT, 0, 0, why },
#define NULLARG_ROW_N(fn, arg, why) { #fn, #arg, NULLARG_NEEDS, 0, 0, why },

/*
 * NULLARG_TABLE(name, ROWS) defines the calls and `const struct nullarg
 * name[]` with `name_n` rows.
 */
#define NULLARG_TABLE(name, ROWS)                                            \
	ROWS(NULLARG_FN_R, NULLARG_FN_C, NULLARG_FN_C)                       \
	const struct nullarg name[] = { ROWS(NULLARG_ROW_R, NULLARG_ROW_C, NULLARG_ROW_N) }; \
	const unsigned name##_n = sizeof(name) / sizeof(name[0])

/* A pointer result as a number: 0 for NULL. */
#define NULLARG_PTR(p) ((intptr_t)(p))

/* Criterion parameters 0..n-1 (row indices). */
struct criterion_test_params nullarg_params(unsigned n);

/* Runs one row: makes the call and asserts its result (test_null_args.c). */
void nullarg_run(const struct nullarg *row);

/*
 * The test `suite`::rows, one run of each row of `table`.  Criterion
 * copies parameters into the test's process but not what they point to,
 * so the rows go by index.
 */
#define NULLARG_TESTS(suite, table)                                    \
	ParameterizedTestParameters(suite, rows)                       \
	{                                                              \
		return nullarg_params(table##_n);                      \
	}                                                              \
	ParameterizedTest(const unsigned *i, suite, rows)              \
	{                                                              \
		if (table[*i].kind == NULLARG_CALL)                    \
			nullarg_run(&table[*i]);                       \
	}                                                              \
	_Static_assert(1, "a semicolon after NULLARG_TESTS()")

extern const struct nullarg nullarg_libgso[], nullarg_xdp[];
extern const unsigned nullarg_libgso_n, nullarg_xdp_n;

#endif
