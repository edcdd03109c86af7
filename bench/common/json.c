#include "json.h"

#include <inttypes.h>
#include <math.h>

void bench_json_begin(struct bench_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = true;
	fputc('{', f);
}

static void key(struct bench_json *j, const char *k)
{
	if (!j->first[j->depth])
		fputs(", ", j->f);
	j->first[j->depth] = false;
	fprintf(j->f, "\"%s\": ", k);
}

void bench_json_end(struct bench_json *j)
{
	while (j->depth > 0)
		bench_json_close(j);
	fputs("}\n", j->f);
	fflush(j->f);
}

void bench_json_obj(struct bench_json *j, const char *k)
{
	key(j, k);
	fputc('{', j->f);
	if (j->depth + 1 < BENCH_JSON_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

void bench_json_close(struct bench_json *j)
{
	if (j->depth > 0) {
		fputc('}', j->f);
		j->depth--;
	}
}

void bench_json_str(struct bench_json *j, const char *k, const char *v)
{
	key(j, k);
	if (!v) {
		fputs("null", j->f);
		return;
	}
	fputc('"', j->f);
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(j->f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(j->f, "\\u%04x", *p);
		else
			fputc(*p, j->f);
	}
	fputc('"', j->f);
}

void bench_json_u64(struct bench_json *j, const char *k, uint64_t v)
{
	key(j, k);
	fprintf(j->f, "%" PRIu64, v);
}

void bench_json_i64(struct bench_json *j, const char *k, int64_t v)
{
	key(j, k);
	fprintf(j->f, "%" PRId64, v);
}

void bench_json_dbl(struct bench_json *j, const char *k, double v)
{
	key(j, k);
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f);
}

void bench_json_bool(struct bench_json *j, const char *k, bool v)
{
	key(j, k);
	fputs(v ? "true" : "false", j->f);
}

void bench_json_null(struct bench_json *j, const char *k)
{
	key(j, k);
	fputs("null", j->f);
}

void bench_json_u64_array(struct bench_json *j, const char *k, const uint64_t *v, size_t n)
{
	key(j, k);
	fputc('[', j->f);
	for (size_t i = 0; i < n; i++)
		fprintf(j->f, "%s%" PRIu64, i ? ", " : "", v[i]);
	fputc(']', j->f);
}
