/*
 * bench/bench_scale --quick --json runs (as root) and ends with its
 * scaling object: both ratios positive, and rows for 1 and 2 queues at
 * both frame sizes with frames counted at the peer.  A smoke test: no
 * speed is asserted (the machine is shared; ratios only have to exist).
 */
#include "test_bench_util.h"

static void fini(void)
{
	bt_fini();
}

/* The last line of s (the scaling object). */
static const char *last_line(const char *s)
{
	const char *p = s + strlen(s);

	while (p > s && p[-1] == '\n')
		p--;
	while (p > s && p[-1] != '\n')
		p--;
	return p;
}

Test(bench_scale, quick_json_prints_the_scaling_object, .fini = fini, .timeout = 240)
{
	const char *argv[] = { bt_prog("bench_scale"), "--quick", "--json", NULL };
	struct bt_proc *p;
	const char *out, *last;
	int st, rows = 0, two_queue_rows = 0;

	gso_test_require_root();
	p = bt_spawn(argv);
	st = bt_wait(p, 200);
	if (st)
		bt_dump(p, "bench_scale");
	cr_assert_eq(st, 0, "bench_scale --quick --json exited %d", st);
	out = bt_read(p->out);
	last = last_line(out);
	for (const char *l = out; l < last; l = strchr(l, '\n') + 1) {
		cr_assert(bt_num(l, "mpps") > 0, "a row without frames at the peer: %.*s", (int)strcspn(l, "\n"), l);
		cr_assert(bt_num(l, "gbps") > 0);
		cr_assert(bt_num(l, "cpu_s_per_gb") > 0);
		cr_assert(bt_num(l, "frame_bytes") == 64 || bt_num(l, "frame_bytes") == 1514);
		cr_assert(bt_num(l, "flows") >= 1);
		cr_assert(bt_str(l, "umem")[0]);
		two_queue_rows += bt_num(l, "queues") == 2;
		rows++;
	}
	cr_assert_geq(rows, 8, "rows: %d\n%s", rows, out);
	cr_assert_geq(two_queue_rows, 4);
	cr_assert(bt_num(last, "scale_2_vs_1_64B") > 0, "%s", last);
	cr_assert(bt_num(last, "scale_2_vs_1_1514B") > 0, "%s", last);
}
