/*
 * A small JSON writer for bench results: one object per line (JSON Lines),
 * so that shell scripts can pick keys with sed/awk and a log of runs stays
 * one record per line.  Keys are written as given (callers use plain
 * ASCII names); string values are escaped.  NaN and infinities become null.
 */
#ifndef BENCH_JSON_H
#define BENCH_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_JSON_DEPTH 8

struct bench_json {
	FILE *f;
	int depth;
	bool first[BENCH_JSON_DEPTH];
};

/* Start the top-level object on f. */
void bench_json_begin(struct bench_json *j, FILE *f);
/* Close the top-level object, newline, flush. */
void bench_json_end(struct bench_json *j);
/* Open / close a nested object under key. */
void bench_json_obj(struct bench_json *j, const char *key);
void bench_json_close(struct bench_json *j);

void bench_json_str(struct bench_json *j, const char *key, const char *v);
void bench_json_u64(struct bench_json *j, const char *key, uint64_t v);
void bench_json_i64(struct bench_json *j, const char *key, int64_t v);
void bench_json_dbl(struct bench_json *j, const char *key, double v);
void bench_json_bool(struct bench_json *j, const char *key, bool v);
void bench_json_null(struct bench_json *j, const char *key);
void bench_json_u64_array(struct bench_json *j, const char *key, const uint64_t *v, size_t n);

#endif
