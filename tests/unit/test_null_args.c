/*
 * The NULL-argument tables (null_args.h) are complete: every GSO_API
 * function declared in the public headers (every *.h of their folders)
 * has a row, and so has each of its pointer parameters, by name; every
 * row names a real function.  A new public function without its rows
 * fails here.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "null_args.h"

struct criterion_test_params nullarg_params(unsigned n)
{
	static unsigned idx[1024];

	cr_assert_leq(n, 1024);
	for (unsigned i = 0; i < n; i++)
		idx[i] = i;
	return cr_make_param_array(unsigned, idx, n);
}

void nullarg_run(const struct nullarg *row)
{
	cr_assert_eq(row->kind, NULLARG_CALL);
	cr_log_info("%s(%s)", row->fn, row->arg);
	int64_t got = row->call();

	cr_assert_eq(got, row->want, "%s, %s: %lld, the header says %lld", row->fn, row->arg, (long long)got,
		     (long long)row->want);
}

#define MAX_DECLS 512
#define MAX_PTRS 8

struct decl {
	char fn[64];
	char ptr[MAX_PTRS][32]; /* names of the pointer parameters */
	unsigned nptr;
	bool seen;              /* some row names it */
};

static struct decl decls[MAX_DECLS];
static unsigned ndecls;

/* The last identifier of `p` (a parameter declaration) into out. */
static void last_ident(const char *p, char *out, size_t cap)
{
	const char *e = p + strlen(p), *b;

	while (e > p && !(isalnum((unsigned char)e[-1]) || e[-1] == '_'))
		e--;
	b = e;
	while (b > p && (isalnum((unsigned char)b[-1]) || b[-1] == '_'))
		b--;
	cr_assert(e > b && (size_t)(e - b) < cap, "no parameter name in '%s'", p);
	memcpy(out, b, (size_t)(e - b));
	out[e - b] = '\0';
}

/* One declaration, from "GSO_API" to ";", whitespace as it came. */
static void add_decl(const char *text, const char *hdr)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	struct decl *d;
	char head[256], params[1024], *p, *save;

	cr_assert(open && close && close > open, "%s: cannot read '%s'", hdr, text);
	cr_assert_lt(ndecls, MAX_DECLS);
	d = &decls[ndecls++];
	cr_assert_lt((size_t)(open - text), sizeof(head));
	memcpy(head, text, (size_t)(open - text));
	head[open - text] = '\0';
	last_ident(head, d->fn, sizeof(d->fn));
	cr_assert_lt((size_t)(close - open - 1), sizeof(params));
	memcpy(params, open + 1, (size_t)(close - open - 1));
	params[close - open - 1] = '\0';
	for (p = strtok_r(params, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		if (!strchr(p, '*'))
			continue;
		cr_assert_lt(d->nptr, MAX_PTRS, "%s", d->fn);
		last_ident(p, d->ptr[d->nptr++], sizeof(d->ptr[0]));
	}
}

static void read_header(const char *rel)
{
	char path[1024], line[512], text[2048] = "";
	bool in = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", GSO_SRC_DIR, rel);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (!in && strncmp(line, "GSO_API ", 8) != 0)
			continue;
		in = true;
		cr_assert_lt(strlen(text) + strlen(line), sizeof(text));
		strcat(text, line);
		if (strchr(line, ';')) {
			add_decl(text, rel);
			text[0] = '\0';
			in = false;
		}
	}
	fclose(f);
}

/* The folders of the public headers: every *.h in them is read. */
static const char *const header_dirs[] = {
	"libgso/include/gso",
	"xdp/include/gso",
	"xdp/e1000/include/gso",
};

static void read_headers(const char *dir)
{
	char path[512];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", GSO_SRC_DIR, dir);
	d = opendir(path);
	cr_assert_not_null(d, "%s: %s", path, strerror(errno));
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n > 2 && !strcmp(de->d_name + n - 2, ".h")) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			read_header(path);
		}
	}
	closedir(d);
}

static struct decl *find_decl(const char *fn)
{
	for (unsigned i = 0; i < ndecls; i++)
		if (!strcmp(decls[i].fn, fn))
			return &decls[i];
	return NULL;
}

static bool has_row(const struct nullarg *t, unsigned n, const char *fn, const char *arg)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(t[i].fn, fn) && !strcmp(t[i].arg, arg))
			return true;
	return false;
}

Test(null_args, tables_cover_every_function)
{
	const struct { const struct nullarg *t; unsigned n; } tabs[] = {
		{ nullarg_libgso, nullarg_libgso_n },
		{ nullarg_xdp, nullarg_xdp_n },
	};
	unsigned missing = 0;

	for (size_t i = 0; i < sizeof(header_dirs) / sizeof(header_dirs[0]); i++)
		read_headers(header_dirs[i]);
	cr_assert_gt(ndecls, 200, "read only %u GSO_API declarations", ndecls);

	/* Every row names a declared function; contract and needs rows say why. */
	for (size_t k = 0; k < sizeof(tabs) / sizeof(tabs[0]); k++)
		for (unsigned i = 0; i < tabs[k].n; i++) {
			const struct nullarg *r = &tabs[k].t[i];
			struct decl *d = find_decl(r->fn);

			cr_expect_not_null(d, "row %s(%s): no such GSO_API function", r->fn, r->arg);
			if (d)
				d->seen = true;
			if (r->kind != NULLARG_CALL)
				cr_expect(r->why && r->why[0], "row %s(%s) gives no reason", r->fn, r->arg);
			if (r->kind == NULLARG_CONTRACT && d) {
				bool ptr = false;

				for (unsigned j = 0; j < d->nptr; j++)
					ptr |= !strcmp(d->ptr[j], r->arg);
				cr_expect(ptr, "contract row %s(%s): not a pointer parameter", r->fn, r->arg);
			}
		}

	/* Every function has a row, every pointer parameter a row of its name. */
	for (unsigned i = 0; i < ndecls; i++) {
		struct decl *d = &decls[i];

		if (!d->seen) {
			cr_log_error("%s: no row in the NULL-argument tables", d->fn);
			missing++;
		}
		for (unsigned j = 0; j < d->nptr; j++) {
			bool found = false;

			for (size_t k = 0; k < sizeof(tabs) / sizeof(tabs[0]); k++)
				found |= has_row(tabs[k].t, tabs[k].n, d->fn, d->ptr[j]);
			if (!found) {
				cr_log_error("%s: no row for pointer parameter %s", d->fn, d->ptr[j]);
				missing++;
			}
		}
	}
	cr_assert_eq(missing, 0, "%u functions or parameters without a row (see above)", missing);
}
