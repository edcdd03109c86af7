/*
 * UMEM chunk accounting (xdp/dev/umem_alloc.c), without any socket: argument
 * boundaries, run allocation and fragmentation, the hold/reference life
 * cycle, refused operations, and a random walk checked against a shadow
 * model after every step (the four state counters always add up and match).
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
