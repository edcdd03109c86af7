/*
 * The soak (tests/soak, `make soak`) for about half a minute, so that it
 * cannot rot: churn every 2 s of each kind (flaps, MTU changes, receiver
 * kills, port cycles with either steering program) and a balance check
 * every 8 s.  It must end "ok": every stream that failed was explained by
 * the churn, every datagram the sink got was intact, and descriptors,
 * threads and UMEM were balanced at every check.
 */
#include "test_bench_util.h"

Test(soak, smoke, .fini = bt_fini, .timeout = 180)
{
	const char *soak = gso_test_build_path("tests/soak"), *out;
	struct bt_proc *p;
	int rc;

	gso_test_require_root();
	cr_assert_eq(access(soak, X_OK), 0, "%s not built (make test-progs)", soak);
	const char *argv[BT_MAX_ARGS] = { soak, "--minutes", "0.4", "--churn-every", "2", "--check-every", "8",
					  "--seed", "26", "--json" };
	p = bt_spawn(argv);
	rc = bt_wait(p, 150);
	out = bt_read(p->out);
	if (rc)
		bt_dump(p, "soak");
	cr_assert_eq(rc, 0, "soak exit %d: %s", rc, out);
	cr_assert_str_eq(bt_str(out, "status"), "ok", "%s", out);
	cr_assert_geq(bt_num(out, "streams_verified"), 1, "%s", out);
	cr_assert_geq(bt_num(out, "dgram_flows_ok"), 1, "%s", out);
	cr_assert_geq(bt_num(out, "dgrams_received"), 1, "%s", out);
	cr_assert_eq(bt_num(out, "dgrams_bad"), 0, "%s", out);
	cr_assert_geq(bt_num(out, "flaps"), 1, "%s", out);
	cr_assert_geq(bt_num(out, "mtu_changes"), 1, "%s", out);
	cr_assert_geq(bt_num(out, "receiver_kills"), 1, "%s", out);
	cr_assert_geq(bt_num(out, "steer_own_cycles"), 1, "%s", out);
	cr_assert_geq(bt_num(out, "steer_soak_cycles"), 1, "%s", out);
	cr_assert_geq(bt_num(out, "checks"), 2, "%s", out);
	cr_assert_eq(bt_num(out, "fds"), bt_num(out, "fds_baseline"), "%s", out);
	cr_assert_eq(bt_num(out, "threads"), bt_num(out, "threads_baseline"), "%s", out);
	cr_assert_gt(bt_num(out, "umem_chunks"), 0, "%s", out);
	cr_assert_eq(bt_num(out, "umem_chunks_free"), bt_num(out, "umem_chunks"), "%s", out);
	cr_log_info("%s", out);
}
