/*
 * UMEM chunk accounting (xdp/dev/umem_alloc.c), without any socket: argument
 * boundaries, run allocation and fragmentation, first fit across bitmap
 * words (also against a bit-by-bit reference), the hold/reference life
 * cycle, releasing and marking sent a run at a time, refused operations,
 * and random walks checked against a shadow model after every step (the
 * four state counters always add up and match).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <string.h>

#include "gso_test.h"
#include "dev/umem_alloc_internal.h"

static void check_sum(const struct umem_alloc *a)
{
	uint32_t s = 0;

	for (int i = 0; i < UA_NSTATES; i++)
		s += ua_count(a, (enum ua_state)i);
	cr_assert_eq(s, a->nchunks, "counters add up to %u, not %u", s, a->nchunks);
}

/* ---- init boundaries ---- */

struct init_case {
	uint32_t nchunks, nbuf;
	int ret;
};

ParameterizedTestParameters(umem_alloc, init)
{
	static struct init_case c[] = {
		{ 0, 0, -EINVAL },
		{ 1, 0, 0 },
		{ 1, 1, 0 },
		{ 1, 2, -EINVAL },
		{ 64, 64, 0 },
		{ 65, 64, 0 },
		{ 4096, 4000, 0 },
		{ (1u << 31) + 1, 0, -EINVAL },
	};
	return cr_make_param_array(struct init_case, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct init_case *c, umem_alloc, init)
{
	struct umem_alloc a;

	memset(&a, 0xa5, sizeof(a));
	int r = gsoi_ua_init(&a, c->nchunks, c->nbuf);
	cr_assert_eq(r, c->ret, "gsoi_ua_init(%u, %u) = %d, want %d", c->nchunks, c->nbuf, r, c->ret);
	if (r)
		return;
	cr_assert_eq(ua_count(&a, UA_FREE), c->nchunks);
	cr_assert_eq(ua_free_backend(&a), c->nchunks - c->nbuf);
	check_sum(&a);
	gsoi_ua_fini(&a);
	gsoi_ua_fini(&a); /* idempotent */
}

/* ---- run sizes against the buffer region ---- */

struct run_case {
	uint32_t nbuf, n;
	int ret;
};

ParameterizedTestParameters(umem_alloc, run_sizes)
{
	static struct run_case c[] = {
		{ 16, 0, -EINVAL },
		{ 16, 1, 0 },
		{ 16, 15, 0 },
		{ 16, 16, 0 },
		{ 16, 17, -EMSGSIZE },
		{ 0, 1, -EMSGSIZE },
		{ 130, 130, 0 },  /* crosses two bitmap words */
		{ 130, 131, -EMSGSIZE },
	};
	return cr_make_param_array(struct run_case, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct run_case *c, umem_alloc, run_sizes)
{
	struct umem_alloc a;
	uint32_t first = 12345;

	cr_assert_eq(gsoi_ua_init(&a, c->nbuf + 8, c->nbuf), 0);
	int r = gsoi_ua_alloc_run(&a, c->n, &first);
	cr_assert_eq(r, c->ret, "run of %u in %u: %d, want %d", c->n, c->nbuf, r, c->ret);
	if (r) {
		cr_assert_eq(first, 12345, "failed call wrote its output");
		cr_assert_eq(ua_count(&a, UA_FREE), a.nchunks, "failed call changed state");
	} else {
		cr_assert_eq(first, 0);
		cr_assert_eq(ua_count(&a, UA_QUEUED), c->n);
		for (uint32_t i = 0; i < c->n; i++)
			cr_assert_eq(gsoi_ua_state_of(&a, i), UA_QUEUED);
	}
	check_sum(&a);
	gsoi_ua_fini(&a);
}

Test(umem_alloc, exhaustion_is_backpressure)
{
	struct umem_alloc a;
	uint32_t f[4], one;

	cr_assert_eq(gsoi_ua_init(&a, 20, 16), 0);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(gsoi_ua_alloc_run(&a, 4, &f[i]), 0);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 1, &one), -ENOBUFS);
	/* The backend region is untouched by buffer exhaustion. */
	for (int i = 0; i < 4; i++)
		cr_assert_eq(gsoi_ua_alloc_one(&a, &one), 0, "backend chunk %d", i);
	cr_assert_eq(gsoi_ua_alloc_one(&a, &one), -ENOBUFS);
	cr_assert_eq(ua_count(&a, UA_FREE), 0);
	/* Free a middle run: a run of 4 fits again, 5 does not. */
	for (uint32_t i = f[1]; i < f[1] + 4; i++)
		cr_assert_eq(gsoi_ua_unhold(&a, i), 0);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 5, &one), -ENOBUFS);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 4, &one), 0);
	cr_assert_eq(one, f[1]);
	check_sum(&a);
	gsoi_ua_fini(&a);
}

Test(umem_alloc, fragmentation_needs_contiguity)
{
	struct umem_alloc a;
	uint32_t first;

	cr_assert_eq(gsoi_ua_init(&a, 8, 8), 0);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 8, &first), 0);
	/* Free every other chunk: 4 free, but no two adjacent. */
	for (uint32_t i = 0; i < 8; i += 2)
		cr_assert_eq(gsoi_ua_unhold(&a, i), 0);
	cr_assert_eq(ua_count(&a, UA_FREE), 4);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 2, &first), -ENOBUFS);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 1, &first), 0);
	cr_assert_eq(first % 2, 0);
	cr_assert_eq(gsoi_ua_unhold(&a, 1), 0);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 2, &first), 0, "chunks 1-2 or 0-1 are a run now");
	check_sum(&a);
	gsoi_ua_fini(&a);
}

Test(umem_alloc, first_fit_reuses_what_was_freed)
{
	struct umem_alloc a;
	uint32_t f1, f2, f3, f4;

	cr_assert_eq(gsoi_ua_init(&a, 200, 200), 0);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 6, &f1), 0);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 3, &f2), 0);
	cr_assert_eq(f2, 6);
	for (uint32_t i = 0; i < 6; i++)
		gsoi_ua_unhold(&a, i);
	/*
	 * The front was freed (ACKed): the next run goes there, to lines the
	 * cache still holds, not on to 9 and beyond.
	 */
	cr_assert_eq(gsoi_ua_alloc_run(&a, 5, &f3), 0);
	cr_assert_eq(f3, 0);
	/* A run that does not fit the hole goes past what is held (6-8), skipping whole busy words too. */
	cr_assert_eq(gsoi_ua_alloc_run(&a, 64, &f4), 0);
	cr_assert_eq(f4, 9);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 2, &f4), 0);
	cr_assert_eq(f4, 73);
	check_sum(&a);
	gsoi_ua_fini(&a);
}

/* ---- life cycle: hold + references ---- */

Test(umem_alloc, chunk_free_only_after_last_reference)
{
	struct umem_alloc a;
	uint32_t c;

	cr_assert_eq(gsoi_ua_init(&a, 4, 2), 0);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 1, &c), 0);
	cr_assert_eq(gsoi_ua_state_of(&a, c), UA_QUEUED);
	cr_assert_eq(gsoi_ua_get(&a, c), 0);
	cr_assert_eq(gsoi_ua_get(&a, c), 0);
	cr_assert_eq(gsoi_ua_state_of(&a, c), UA_INFLIGHT);
	cr_assert_eq(gsoi_ua_put(&a, c), 0);
	cr_assert_eq(gsoi_ua_state_of(&a, c), UA_INFLIGHT, "one reference left");
	cr_assert_eq(gsoi_ua_put(&a, c), 0);
	cr_assert_eq(gsoi_ua_state_of(&a, c), UA_HELD, "sent, flow still holds it");
	cr_assert_eq(gsoi_ua_get(&a, c), 0, "retransmit");
	cr_assert_eq(gsoi_ua_unhold(&a, c), 0, "ACK while the retransmit is in flight");
	cr_assert_eq(gsoi_ua_state_of(&a, c), UA_INFLIGHT, "no free while in flight");
	cr_assert_eq(ua_count(&a, UA_FREE), 3);
	cr_assert_eq(gsoi_ua_put(&a, c), 0);
	cr_assert_eq(gsoi_ua_state_of(&a, c), UA_FREE);
	cr_assert_eq(ua_count(&a, UA_FREE), 4);
	check_sum(&a);
	gsoi_ua_fini(&a);
}

Test(umem_alloc, refused_operations_change_nothing)
{
	struct umem_alloc a;
	uint32_t c, before[UA_NSTATES];

	cr_assert_eq(gsoi_ua_init(&a, 4, 2), 0);
	cr_assert_eq(gsoi_ua_alloc_one(&a, &c), 0);
	memcpy(before, a.count, sizeof(before));
	cr_assert_eq(gsoi_ua_put(&a, c), -EINVAL, "completion never posted");
	cr_assert_eq(gsoi_ua_put(&a, 99), -EINVAL, "out of range");
	cr_assert_eq(gsoi_ua_get(&a, 0), -EINVAL, "reference to a free chunk");
	cr_assert_eq(gsoi_ua_get(&a, 99), -EINVAL);
	cr_assert_eq(gsoi_ua_unhold(&a, 0), -EINVAL, "free chunk has no hold");
	cr_assert_eq(gsoi_ua_unhold(&a, 4), -EINVAL);
	cr_assert_eq(memcmp(before, a.count, sizeof(before)), 0);
	cr_assert_eq(a.bad_ops, 6);
	cr_assert_eq(gsoi_ua_unhold(&a, c), 0);
	cr_assert_eq(gsoi_ua_unhold(&a, c), -EINVAL, "double release");
	cr_assert_eq(ua_count(&a, UA_FREE), 4);
	check_sum(&a);
	gsoi_ua_fini(&a);
}

/*
 * Runs carry the generation of their allocation: a handle kept after its
 * run was freed and the chunks allocated again (same first chunk, same
 * length) names another run, and releasing through it changes nothing.
 */
Test(umem_alloc, stale_generation_is_refused_all_or_nothing)
{
	struct umem_alloc a;
	uint32_t f, f2, g, g2, before[UA_NSTATES];

	cr_assert_eq(gsoi_ua_init(&a, 16, 8), 0);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 8, &f), 0);
	g = ua_gen(&a, f);
	cr_assert_neq(g, 0, "0 is no generation");
	for (uint32_t i = f; i < f + 8; i++)
		cr_assert_eq(ua_gen(&a, i), g, "chunk %u", i);
	cr_assert(gsoi_ua_run_held(&a, f, 8, g));
	cr_assert_not(gsoi_ua_run_held(&a, f, 9, g), "past the buffer region");
	cr_assert_eq(gsoi_ua_unhold_run(&a, f, 8, g), 0);
	cr_assert_not(gsoi_ua_run_held(&a, f, 1, g), "released");
	cr_assert_eq(gsoi_ua_unhold_run(&a, f, 1, g), -EINVAL, "double release");

	cr_assert_eq(gsoi_ua_alloc_run(&a, 8, &f2), 0);
	g2 = ua_gen(&a, f2);
	cr_assert_eq(f2, f, "the same chunks again");
	cr_assert_neq(g2, g);
	memcpy(before, a.count, sizeof(before));
	a.bad_ops = 0;
	cr_assert_eq(gsoi_ua_unhold_run(&a, f, 8, g), -EINVAL, "stale handle released the new run");
	cr_assert_eq(gsoi_ua_unhold_run(&a, f + 3, 2, g), -EINVAL);
	cr_assert_eq(gsoi_ua_unhold_run(&a, f, 8, 0), -EINVAL, "a zeroed handle");
	cr_assert_eq(memcmp(before, a.count, sizeof(before)), 0);
	cr_assert_eq(a.bad_ops, 3);
	for (uint32_t i = f; i < f + 8; i++)
		cr_assert_eq(gsoi_ua_state_of(&a, i), UA_QUEUED);

	/* One chunk not the handle's (released early, in flight): none of the range is released. */
	cr_assert_eq(gsoi_ua_get(&a, f + 5), 0);
	cr_assert_eq(gsoi_ua_unhold(&a, f + 5), 0);
	cr_assert_eq(gsoi_ua_unhold_run(&a, f, 8, g2), -EINVAL);
	cr_assert_eq(ua_count(&a, UA_QUEUED), 7);
	cr_assert_eq(gsoi_ua_unhold_run(&a, f, 5, g2), 0, "the head is still the run's");
	cr_assert_eq(gsoi_ua_unhold_run(&a, f + 6, 2, g2), 0);
	cr_assert_eq(gsoi_ua_put(&a, f + 5), 0);
	cr_assert_eq(ua_count(&a, UA_FREE), 16);
	check_sum(&a);
	gsoi_ua_fini(&a);
}

Test(umem_alloc, reference_limit)
{
	struct umem_alloc a;
	uint32_t c;

	cr_assert_eq(gsoi_ua_init(&a, 2, 1), 0);
	cr_assert_eq(gsoi_ua_alloc_one(&a, &c), 0);
	for (uint32_t i = 0; i < UA_MAX_REFS; i++)
		cr_assert_eq(gsoi_ua_get(&a, c), 0);
	cr_assert_eq(gsoi_ua_get(&a, c), -EOVERFLOW);
	cr_assert_eq(gsoi_ua_reclaim(&a), UA_MAX_REFS);
	cr_assert_eq(gsoi_ua_state_of(&a, c), UA_HELD);
	gsoi_ua_fini(&a);
}

Test(umem_alloc, reclaim_after_teardown)
{
	struct umem_alloc a;
	uint32_t f, one;

	cr_assert_eq(gsoi_ua_init(&a, 64, 48), 0);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 17, &f), 0);
	for (uint32_t i = f; i < f + 17; i++) {
		gsoi_ua_get(&a, i);
		gsoi_ua_get(&a, i);
	}
	cr_assert_eq(gsoi_ua_alloc_one(&a, &one), 0);
	gsoi_ua_get(&a, one);
	gsoi_ua_unhold(&a, one);
	cr_assert_eq(ua_count(&a, UA_INFLIGHT), 18);
	cr_assert_eq(gsoi_ua_reclaim(&a), 35);
	cr_assert_eq(ua_count(&a, UA_INFLIGHT), 0);
	cr_assert_eq(ua_count(&a, UA_HELD), 17, "the flow still holds its buffer");
	for (uint32_t i = f; i < f + 17; i++)
		gsoi_ua_unhold(&a, i);
	cr_assert_eq(ua_count(&a, UA_FREE), 64);
	gsoi_ua_fini(&a);
}

/* ---- random walk against a shadow model ---- */

struct shadow {
	uint8_t held, sent, used;
	uint32_t refs;
};

static enum ua_state shadow_state(const struct shadow *s)
{
	if (s->refs)
		return UA_INFLIGHT;
	if (s->held)
		return s->sent ? UA_HELD : UA_QUEUED;
	return UA_FREE;
}

Test(umem_alloc, random_walk_matches_model)
{
	enum { N = 200, NBUF = 150 };
	static struct shadow sh[N];
	struct umem_alloc a;
	uint64_t rng = 42;

	memset(sh, 0, sizeof(sh));
	cr_assert_eq(gsoi_ua_init(&a, N, NBUF), 0);
	for (int step = 0; step < 20000; step++) {
		uint64_t r = gso_test_rand(&rng);
		uint32_t i = (uint32_t)(r >> 8) % N, got;
		int ret;

		switch (r % 6) {
		case 0: {
			uint32_t n = 1 + (uint32_t)(r >> 40) % 20;
			ret = gsoi_ua_alloc_run(&a, n, &got);
			if (!ret) {
				cr_assert_leq(got + n, NBUF);
				for (uint32_t k = got; k < got + n; k++) {
					cr_assert_not(sh[k].used, "chunk %u handed out twice", k);
					sh[k] = (struct shadow){ .held = 1, .used = 1 };
				}
			} else {
				cr_assert_eq(ret, -ENOBUFS);
			}
			break;
		}
		case 1:
			ret = gsoi_ua_alloc_one(&a, &got);
			if (!ret) {
				cr_assert_geq(got, NBUF);
				cr_assert_not(sh[got].used, "chunk %u handed out twice", got);
				sh[got] = (struct shadow){ .held = 1, .used = 1 };
			}
			break;
		case 2:
			ret = gsoi_ua_get(&a, i);
			cr_assert_eq(ret, sh[i].used ? 0 : -EINVAL);
			if (!ret) {
				sh[i].refs++;
				sh[i].sent = 1;
			}
			break;
		case 3:
		case 4:
			ret = gsoi_ua_put(&a, i);
			cr_assert_eq(ret, sh[i].refs ? 0 : -EINVAL);
			if (!ret && !--sh[i].refs && !sh[i].held)
				sh[i].used = 0;
			break;
		case 5:
			ret = gsoi_ua_unhold(&a, i);
			cr_assert_eq(ret, sh[i].held ? 0 : -EINVAL);
			if (!ret) {
				sh[i].held = 0;
				if (!sh[i].refs)
					sh[i].used = 0;
			}
			break;
		}
		uint32_t cnt[UA_NSTATES] = { 0 };
		for (uint32_t k = 0; k < N; k++) {
			enum ua_state s = shadow_state(&sh[k]);
			cnt[s]++;
			cr_assert_eq(gsoi_ua_state_of(&a, k), s, "step %d chunk %u", step, k);
		}
		for (int s = 0; s < UA_NSTATES; s++)
			cr_assert_eq(ua_count(&a, (enum ua_state)s), cnt[s], "step %d state %d", step, s);
	}
	gsoi_ua_reclaim(&a);
	for (uint32_t k = 0; k < N; k++)
		if (sh[k].held)
			gsoi_ua_unhold(&a, k);
	cr_assert_eq(ua_count(&a, UA_FREE), N, "all free after teardown");
	gsoi_ua_fini(&a);
}

/* ---- first fit over the bitmap, word by word ---- */

/*
 * An allocator whose buffer region [0, nbuf) is busy except for the
 * `nfree` ranges [from, to) in `free_`: one run over it all, then the free
 * chunks unheld one by one.
 */
static void layout(struct umem_alloc *a, uint32_t nbuf, const uint32_t (*free_)[2], int nfree)
{
	uint32_t f;

	cr_assert_eq(gsoi_ua_init(a, nbuf + 4, nbuf), 0);
	cr_assert_eq(gsoi_ua_alloc_run(a, nbuf, &f), 0);
	for (int k = 0; k < nfree; k++)
		for (uint32_t i = free_[k][0]; i < free_[k][1]; i++)
			cr_assert_eq(gsoi_ua_unhold(a, i), 0, "chunk %u", i);
	check_sum(a);
}

struct fit_case {
	uint32_t nbuf;
	uint32_t free_[4][2];
	int nfree;
	uint32_t n;
	int ret;
	uint32_t first;
};

ParameterizedTestParameters(umem_alloc, first_fit_across_words)
{
	static struct fit_case c[] = {
		/* A run spanning two words, after a hole too small for it. */
		{ 256, { { 10, 15 }, { 60, 70 } }, 2, 8, 0, 60 },
		{ 256, { { 10, 15 }, { 60, 70 } }, 2, 5, 0, 10 },
		{ 256, { { 10, 15 }, { 60, 70 } }, 2, 10, 0, 60 },
		{ 256, { { 10, 15 }, { 60, 70 } }, 2, 11, -ENOBUFS, 0 },
		/* Exactly across the edge of a word, and one chunk short of it. */
		{ 256, { { 63, 66 } }, 1, 3, 0, 63 },
		{ 256, { { 62, 64 } }, 1, 2, 0, 62 },
		{ 256, { { 62, 64 } }, 1, 3, -ENOBUFS, 0 },
		{ 256, { { 64, 66 }, { 100, 103 } }, 2, 3, 0, 100 },
		{ 256, { { 62, 64 }, { 65, 70 } }, 2, 3, 0, 65 },
		{ 256, { { 61, 64 }, { 120, 124 } }, 2, 4, 0, 120 },
		/* Spanning three words; holes smaller than n in each word before it. */
		{ 320, { { 3, 40 }, { 70, 127 }, { 130, 150 }, { 190, 320 } }, 4, 130, 0, 190 },
		{ 320, { { 3, 40 }, { 50, 200 } }, 2, 140, 0, 50 },
		{ 320, { { 3, 40 }, { 50, 200 } }, 2, 150, 0, 50 },
		{ 320, { { 3, 40 }, { 50, 200 } }, 2, 151, -ENOBUFS, 0 },
		/* A whole word free between busy ones. */
		{ 256, { { 128, 192 } }, 1, 64, 0, 128 },
		{ 256, { { 127, 192 } }, 1, 65, 0, 127 },
		{ 256, { { 128, 193 } }, 1, 65, 0, 128 },
		{ 256, { { 128, 192 } }, 1, 65, -ENOBUFS, 0 },
		/* nbuf not a multiple of 64: the run ends exactly at nbuf, never past it. */
		{ 200, { { 190, 200 } }, 1, 10, 0, 190 },
		{ 200, { { 190, 200 } }, 1, 11, -ENOBUFS, 0 },
		{ 200, { { 195, 200 } }, 1, 6, -ENOBUFS, 0 },
		{ 200, { { 100, 103 }, { 199, 200 } }, 2, 1, 0, 100 },
		{ 200, { { 199, 200 } }, 1, 1, 0, 199 },
		{ 200, { { 199, 200 } }, 1, 2, -ENOBUFS, 0 },
		{ 130, { { 120, 130 } }, 1, 10, 0, 120 },
		{ 130, { { 120, 130 } }, 1, 11, -ENOBUFS, 0 },
		{ 130, { { 128, 130 } }, 1, 3, -ENOBUFS, 0 },
		{ 65, { { 0, 1 }, { 64, 65 } }, 2, 2, -ENOBUFS, 0 },
		{ 65, { { 63, 65 } }, 1, 2, 0, 63 },
		{ 64, { { 32, 64 } }, 1, 32, 0, 32 },
		{ 64, { { 32, 64 } }, 1, 33, -ENOBUFS, 0 },
		/* Nothing free at all. */
		{ 200, { { 0, 0 } }, 0, 1, -ENOBUFS, 0 },
	};
	return cr_make_param_array(struct fit_case, c, sizeof(c) / sizeof(c[0]));
}

ParameterizedTest(struct fit_case *c, umem_alloc, first_fit_across_words)
{
	struct umem_alloc a;
	uint32_t first = 12345, nfree;

	layout(&a, c->nbuf, (const uint32_t(*)[2])c->free_, c->nfree);
	nfree = ua_count(&a, UA_FREE);
	int r = gsoi_ua_alloc_run(&a, c->n, &first);
	cr_assert_eq(r, c->ret, "run of %u: %d, want %d", c->n, r, c->ret);
	if (!r) {
		cr_assert_eq(first, c->first, "run of %u at %u, want %u (first fit)", c->n, first, c->first);
		cr_assert_eq(ua_count(&a, UA_FREE), nfree - c->n);
		for (uint32_t i = first; i < first + c->n; i++)
			cr_assert_eq(gsoi_ua_state_of(&a, i), UA_QUEUED);
	} else {
		cr_assert_eq(ua_count(&a, UA_FREE), nfree, "failed call changed state");
	}
	check_sum(&a);
	gsoi_ua_fini(&a);
}

/* The plain definition: the lowest s with chunks [s, s + n) all free, bit by bit. */
static uint32_t ref_first_fit(const bool *busy, uint32_t nbuf, uint32_t n)
{
	for (uint32_t s = 0; s + n <= nbuf; s++) {
		uint32_t k = 0;

		while (k < n && !busy[s + k])
			k++;
		if (k == n)
			return s;
	}
	return UINT32_MAX;
}

static void check_model(const struct umem_alloc *a, const struct shadow *sh, uint32_t nchunks, int step)
{
	uint32_t cnt[UA_NSTATES] = { 0 };

	for (uint32_t k = 0; k < nchunks; k++) {
		enum ua_state s = shadow_state(&sh[k]);

		cnt[s]++;
		cr_assert_eq(gsoi_ua_state_of(a, k), s, "step %d chunk %u", step, k);
	}
	for (int s = 0; s < UA_NSTATES; s++)
		cr_assert_eq(ua_count(a, (enum ua_state)s), cnt[s], "step %d state %d", step, s);
	check_sum(a);
}

/*
 * Random runs allocated, sent, referenced and released over buffer regions
 * around the word sizes: every allocation lands where the bit-by-bit first
 * fit says, and the states and counters follow a shadow model.
 */
Test(umem_alloc, first_fit_matches_bitwise_reference)
{
	static const uint32_t nbufs[] = { 1, 63, 64, 65, 127, 128, 129, 200, 333 };
	enum { MAXB = 333, MAXRUNS = 64 };
	static struct shadow sh[MAXB + 8];
	static bool busy[MAXB];
	uint64_t rng = 7;

	for (size_t b = 0; b < sizeof(nbufs) / sizeof(nbufs[0]); b++) {
		uint32_t nbuf = nbufs[b], nchunks = nbuf + 8, nruns = 0;
		struct { uint32_t first, n, gen; } run[MAXRUNS];
		struct umem_alloc a;

		memset(sh, 0, sizeof(sh));
		cr_assert_eq(gsoi_ua_init(&a, nchunks, nbuf), 0);
		for (int step = 0; step < 6000; step++) {
			uint64_t r = gso_test_rand(&rng);
			uint32_t k = (uint32_t)(r >> 16);
			int ret;

			switch (r % 8) {
			case 0:
			case 1:
			case 2: { /* allocate: mostly short runs, some across words */
				uint32_t n = 1 + (uint32_t)(r >> 40) % ((r >> 62) ? 20 : 140), got = 0, want;

				if (nruns == MAXRUNS || n > nbuf)
					break;
				for (uint32_t i = 0; i < nbuf; i++)
					busy[i] = shadow_state(&sh[i]) != UA_FREE;
				want = ref_first_fit(busy, nbuf, n);
				ret = gsoi_ua_alloc_run(&a, n, &got);
				if (want == UINT32_MAX) {
					cr_assert_eq(ret, -ENOBUFS, "nbuf %u step %d: run of %u found at %u", nbuf,
						     step, n, got);
					break;
				}
				cr_assert_eq(ret, 0, "nbuf %u step %d: run of %u not found (%u free)", nbuf, step,
					     n, want);
				cr_assert_eq(got, want, "nbuf %u step %d: run of %u at %u, first fit %u", nbuf,
					     step, n, got, want);
				for (uint32_t i = got; i < got + n; i++)
					sh[i] = (struct shadow){ .held = 1, .used = 1 };
				run[nruns].first = got;
				run[nruns].n = n;
				run[nruns++].gen = ua_gen(&a, got);
				break;
			}
			case 3: /* send part of a run */
				if (nruns) {
					uint32_t j = k % nruns, off = (uint32_t)(r >> 32) % run[j].n;
					uint32_t len = 1 + (uint32_t)(r >> 48) % (run[j].n - off);

					cr_assert_eq(gsoi_ua_mark_sent_run(&a, run[j].first + off, len), 0);
					for (uint32_t i = run[j].first + off; i < run[j].first + off + len; i++)
						sh[i].sent = 1;
				}
				break;
			case 4: /* a descriptor posted */
				if (nruns) {
					uint32_t j = k % nruns, i = run[j].first + (uint32_t)(r >> 32) % run[j].n;

					cr_assert_eq(gsoi_ua_get(&a, i), 0);
					sh[i].refs++;
					sh[i].sent = 1;
				}
				break;
			case 5: { /* a completion */
				uint32_t i = k % nchunks;

				ret = gsoi_ua_put(&a, i);
				cr_assert_eq(ret, sh[i].refs ? 0 : -EINVAL);
				if (!ret && !--sh[i].refs && !sh[i].held)
					sh[i].used = 0;
				break;
			}
			case 6:
			case 7: /* release a run, or try to with a wrong generation */
				if (nruns) {
					uint32_t j = k % nruns;
					uint64_t bad = a.bad_ops;

					if (r >> 62 == 0) {
						cr_assert_eq(gsoi_ua_unhold_run(&a, run[j].first, run[j].n,
										run[j].gen + 1),
							     -EINVAL);
						cr_assert_eq(a.bad_ops, bad + 1);
						break;
					}
					cr_assert_eq(gsoi_ua_unhold_run(&a, run[j].first, run[j].n, run[j].gen), 0);
					cr_assert_eq(a.bad_ops, bad);
					for (uint32_t i = run[j].first; i < run[j].first + run[j].n; i++) {
						sh[i].held = 0;
						if (!sh[i].refs)
							sh[i].used = 0;
					}
					run[j] = run[--nruns];
				}
				break;
			}
			check_model(&a, sh, nchunks, step);
		}
		gsoi_ua_reclaim(&a);
		for (uint32_t j = 0; j < nruns; j++)
			cr_assert_eq(gsoi_ua_unhold_run(&a, run[j].first, run[j].n, run[j].gen), 0);
		cr_assert_eq(ua_count(&a, UA_FREE), nchunks, "nbuf %u: all free after teardown", nbuf);
		gsoi_ua_fini(&a);
	}
}

/* ---- releasing a run: counters in bulk ---- */

Test(umem_alloc, unhold_run_moves_counters_in_bulk)
{
	struct umem_alloc a;
	uint32_t f, g, x, before[UA_NSTATES];

	cr_assert_eq(gsoi_ua_init(&a, 16, 12), 0);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 10, &f), 0);
	g = ua_gen(&a, f);
	/* 0-2 QUEUED; 3-5 HELD (sent, completed); 6-7 INFLIGHT; 8-9 HELD (sent by a copying backend). */
	for (uint32_t i = f + 3; i < f + 8; i++)
		cr_assert_eq(gsoi_ua_get(&a, i), 0);
	for (uint32_t i = f + 3; i < f + 6; i++)
		cr_assert_eq(gsoi_ua_put(&a, i), 0);
	cr_assert_eq(gsoi_ua_mark_sent_run(&a, f + 8, 2), 0);
	cr_assert_eq(ua_count(&a, UA_QUEUED), 3);
	cr_assert_eq(ua_count(&a, UA_HELD), 5);
	cr_assert_eq(ua_count(&a, UA_INFLIGHT), 2);
	cr_assert_eq(ua_count(&a, UA_FREE), 6);

	/* A stale generation: nothing changes, one refusal counted. */
	memcpy(before, a.count, sizeof(before));
	cr_assert_eq(gsoi_ua_unhold_run(&a, f, 10, g + 1), -EINVAL);
	cr_assert_eq(gsoi_ua_unhold_run(&a, f + 2, 3, 0), -EINVAL);
	cr_assert_eq(memcmp(before, a.count, sizeof(before)), 0);
	cr_assert_eq(a.bad_ops, 2);
	cr_assert_eq(gsoi_ua_state_of(&a, f), UA_QUEUED);
	cr_assert_eq(gsoi_ua_state_of(&a, f + 3), UA_HELD);
	cr_assert_eq(gsoi_ua_state_of(&a, f + 6), UA_INFLIGHT);
	cr_assert(gsoi_ua_run_held(&a, f, 10, g));

	cr_assert_eq(gsoi_ua_unhold_run(&a, f, 10, g), 0);
	cr_assert_eq(a.bad_ops, 2);
	cr_assert_eq(ua_count(&a, UA_QUEUED), 0);
	cr_assert_eq(ua_count(&a, UA_HELD), 0);
	cr_assert_eq(ua_count(&a, UA_INFLIGHT), 2, "in flight: only the hold is dropped");
	cr_assert_eq(ua_count(&a, UA_FREE), 14);
	for (uint32_t i = f; i < f + 10; i++)
		cr_assert_eq(gsoi_ua_state_of(&a, i), i == f + 6 || i == f + 7 ? UA_INFLIGHT : UA_FREE, "chunk %u", i);
	cr_assert_not(gsoi_ua_run_held(&a, f + 6, 1, g));
	check_sum(&a);

	/* The chunks in flight stay busy: first fit goes around them. */
	cr_assert_eq(gsoi_ua_alloc_run(&a, 7, &x), -ENOBUFS, "only 6 free before, 4 after the chunks in flight");
	cr_assert_eq(gsoi_ua_alloc_run(&a, 6, &x), 0);
	cr_assert_eq(x, f);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 4, &x), 0);
	cr_assert_eq(x, f + 8);
	cr_assert_eq(gsoi_ua_put(&a, f + 6), 0);
	cr_assert_eq(gsoi_ua_put(&a, f + 7), 0);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 2, &x), 0);
	cr_assert_eq(x, f + 6);
	check_sum(&a);
	gsoi_ua_fini(&a);
}

Test(umem_alloc, unhold_run_alike_chunks)
{
	struct umem_alloc a;
	uint32_t f1, f2, g1, g2;

	cr_assert_eq(gsoi_ua_init(&a, 200, 200), 0);
	/* Across word edges, all QUEUED, and all HELD. */
	cr_assert_eq(gsoi_ua_alloc_run(&a, 60, &f1), 0);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 70, &f2), 0);
	g1 = ua_gen(&a, f1);
	g2 = ua_gen(&a, f2);
	cr_assert_eq(gsoi_ua_mark_sent_run(&a, f2, 70), 0);
	cr_assert_eq(ua_count(&a, UA_QUEUED), 60);
	cr_assert_eq(ua_count(&a, UA_HELD), 70);
	cr_assert_eq(gsoi_ua_unhold_run(&a, f2, 70, g1), -EINVAL, "another run's generation");
	cr_assert_eq(gsoi_ua_unhold_run(&a, f1, 61, g1), -EINVAL, "one chunk past the run");
	cr_assert_eq(gsoi_ua_unhold_run(&a, f2 + 10, 0, g2), 0, "empty range");
	cr_assert_eq(gsoi_ua_unhold_run(&a, f2, 70, g2), 0);
	cr_assert_eq(ua_count(&a, UA_HELD), 0);
	cr_assert_eq(ua_count(&a, UA_FREE), 140);
	cr_assert_eq(gsoi_ua_unhold_run(&a, f1 + 10, 50, g1), 0, "the tail of a run");
	cr_assert_eq(ua_count(&a, UA_QUEUED), 10);
	cr_assert_eq(ua_count(&a, UA_FREE), 190);
	cr_assert_eq(a.bad_ops, 2);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 190, &f2), 0, "the bitmap was cleared word-wise");
	cr_assert_eq(f2, 10);
	check_sum(&a);
	gsoi_ua_fini(&a);
}

/* ---- marking chunks sent ---- */

Test(umem_alloc, mark_sent_run)
{
	struct umem_alloc a;
	uint32_t f, f2, one, before[UA_NSTATES];

	cr_assert_eq(gsoi_ua_init(&a, 12, 10), 0);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 4, &f), 0);
	cr_assert_eq(gsoi_ua_alloc_run(&a, 2, &f2), 0);
	cr_assert_eq(gsoi_ua_get(&a, f + 1), 0);
	cr_assert_eq(gsoi_ua_mark_sent_run(&a, f, 4), 0);
	cr_assert_eq(gsoi_ua_state_of(&a, f), UA_HELD, "QUEUED -> HELD");
	cr_assert_eq(gsoi_ua_state_of(&a, f + 1), UA_INFLIGHT, "in flight stays");
	cr_assert_eq(gsoi_ua_state_of(&a, f + 2), UA_HELD);
	cr_assert_eq(ua_count(&a, UA_HELD), 3);
	cr_assert_eq(ua_count(&a, UA_INFLIGHT), 1);
	cr_assert_eq(ua_count(&a, UA_QUEUED), 2);
	/* Again (a retransmit): nothing changes. */
	memcpy(before, a.count, sizeof(before));
	cr_assert_eq(gsoi_ua_mark_sent_run(&a, f, 4), 0);
	cr_assert_eq(memcmp(before, a.count, sizeof(before)), 0);
	cr_assert_eq(a.bad_ops, 0);

	/* Free chunks (6-9) in the range: each counted, left alone; the others still marked. */
	cr_assert_eq(gsoi_ua_mark_sent_run(&a, f2, 4), -EINVAL);
	cr_assert_eq(a.bad_ops, 2);
	cr_assert_eq(gsoi_ua_state_of(&a, f2), UA_HELD);
	cr_assert_eq(gsoi_ua_state_of(&a, f2 + 1), UA_HELD);
	cr_assert_eq(gsoi_ua_state_of(&a, f2 + 2), UA_FREE);
	cr_assert_eq(ua_count(&a, UA_QUEUED), 0);
	cr_assert_eq(ua_count(&a, UA_FREE), 6);
	/* Out of range, and a backend chunk. */
	cr_assert_eq(gsoi_ua_alloc_one(&a, &one), 0);
	cr_assert_eq(gsoi_ua_mark_sent_run(&a, 10, 5), -EINVAL);
	cr_assert_eq(a.bad_ops, 2 + 1 + 3, "one free backend chunk, three past the table");
	cr_assert_eq(gsoi_ua_state_of(&a, one), UA_HELD);
	cr_assert_eq(gsoi_ua_mark_sent_run(&a, UINT32_MAX, 2), -EINVAL);
	cr_assert_eq(a.bad_ops, 8);
	cr_assert_eq(gsoi_ua_mark_sent_run(&a, f, 0), 0);
	cr_assert_eq(gsoi_ua_mark_sent_run(&a, 99, 0), 0);
	cr_assert_eq(a.bad_ops, 8);
	check_sum(&a);

	/* Released after the mark: from HELD. */
	cr_assert_eq(gsoi_ua_unhold_run(&a, f2, 2, ua_gen(&a, f2)), 0);
	cr_assert_eq(ua_count(&a, UA_HELD), 4);
	check_sum(&a);
	gsoi_ua_fini(&a);
}

/* The same as a reference per chunk then its completion, on any state and range. */
Test(umem_alloc, mark_sent_run_is_get_then_put)
{
	enum { N = 150, NBUF = 130 };
	struct umem_alloc a, b;
	uint64_t rng = 99;

	cr_assert_eq(gsoi_ua_init(&a, N, NBUF), 0);
	cr_assert_eq(gsoi_ua_init(&b, N, NBUF), 0);
	for (int step = 0; step < 5000; step++) {
		uint64_t r = gso_test_rand(&rng);
		uint32_t i = (uint32_t)(r >> 8) % (N + 4), n = (uint32_t)(r >> 32) % 40, x, y;
		int ra, rb;

		switch (r % 5) {
		case 0:
			ra = gsoi_ua_alloc_run(&a, n + 1, &x);
			rb = gsoi_ua_alloc_run(&b, n + 1, &y);
			cr_assert_eq(ra, rb);
			cr_assert(ra || x == y);
			break;
		case 1:
			ra = gsoi_ua_get(&a, i);
			rb = gsoi_ua_get(&b, i);
			cr_assert_eq(ra, rb);
			break;
		case 2:
			ra = gsoi_ua_put(&a, i);
			rb = gsoi_ua_put(&b, i);
			cr_assert_eq(ra, rb);
			break;
		case 3:
			ra = gsoi_ua_unhold(&a, i);
			rb = gsoi_ua_unhold(&b, i);
			cr_assert_eq(ra, rb);
			break;
		case 4: {
			uint32_t bad = 0;

			for (uint32_t c = i; c < i + n; c++) {
				uint64_t before = b.bad_ops;

				if (!gsoi_ua_get(&b, c))
					gsoi_ua_put(&b, c);
				bad += b.bad_ops != before;
			}
			cr_assert_eq(gsoi_ua_mark_sent_run(&a, i, n), bad ? -EINVAL : 0);
			break;
		}
		}
		cr_assert_eq(a.bad_ops, b.bad_ops, "step %d", step);
		cr_assert_eq(memcmp(a.count, b.count, sizeof(a.count)), 0, "step %d", step);
		for (uint32_t c = 0; c < N; c++)
			cr_assert_eq(gsoi_ua_state_of(&a, c), gsoi_ua_state_of(&b, c), "step %d chunk %u", step, c);
		/* Flags, references and generations alike too, and the free maps. */
		cr_assert_eq(memcmp(a.c, b.c, N * sizeof(*a.c)), 0, "step %d", step);
		cr_assert_eq(memcmp(a.busy, b.busy, (NBUF / 64 + 1) * sizeof(*a.busy)), 0, "step %d", step);
		check_sum(&a);
	}
	gsoi_ua_fini(&a);
	gsoi_ua_fini(&b);
}
