/*
 * Running the test-bed programs of tests/progs (build/tests/tapcap,
 * build/tests/streamcheck) from Criterion tests, and reading the
 * key=value summary line streamcheck prints.
 */
#ifndef GSO_TEST_PROGS_H
#define GSO_TEST_PROGS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Run the built program <prog>, a path under the build folder (e.g.
 * "tests/streamcheck", "tools/gsoseg"), with args (NULL-terminated),
 * stdout and stderr both into the file out_path, and wait.  Returns its exit status, 128 +
 * signal if killed, or -errno if it could not be started.
 */
int test_prog_run(const char *prog, const char *const *args, const char *out_path);

/* A whole file as a NUL-terminated string (malloc'd; NULL on error). */
char *test_read_file(const char *path);

/*
 * The value of `key` in the last line of `text` that starts with
 * "summary " (numbers only).  Returns false if the key is not there.
 */
bool test_summary_u64(const char *text, const char *key, uint64_t *val);

#endif
