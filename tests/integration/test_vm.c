/*
 * Real drivers: the library on Debian 12's kernel (6.1) inside a QEMU guest,
 * behind Linux's own e1000 and virtio_net drivers and QEMU's device models
 * (tests/vm/: the guest is built from Debian's kernel package on first use
 * and cached in the build folder).
 *
 * vm/modes_*: tests/vm/modes.sh -- gsocaps in the guest equals ethtool -k;
 * every bench/sender mode transfers with every byte verified by the
 * receiver on the host side of the tap, or exits 77 naming the kernel
 * feature it lacks; auto works; the tap capture checks (frames within the
 * MTU, checksums, the sequence space covered once) apart from the sender.
 * vm/conformance: tests/vm/conformance.sh -- the conformance cases from
 * a printed seed, byte for byte equal through libgso's software GSO, this
 * host's kernel GSO, the e1000 model and the guest over QEMU's e1000.
 *
 * The scripts print what they found; their exit status is the verdict
 * (77: QEMU cannot run here, which skips -- a failure under CI=true).
 * QEMU runs under TCG here: nothing is asserted on speed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gso_test.h"

static void run(const char *script, const char *args)
{
	int st;

	gso_test_require_root();
	st = gso_test_sh("cd '%s' && sh tests/vm/%s '%s' %s", GSO_SRC_DIR, script, gso_test_build_path(""),
			 args);
	if (st == 77)
		gso_test_skip("tests/vm/%s: QEMU cannot run here (its message is above)", script);
	cr_assert_eq(st, 0, "tests/vm/%s %s: exit status %d (its output is above)", script, args, st);
}

/* The first test also builds the guest (about 15 s, plus the kernel package's download). */
Test(vm, modes_e1000, .timeout = 400)
{
	run("modes.sh", "e1000");
}

Test(vm, modes_virtio, .timeout = 300)
{
	run("modes.sh", "virtio");
}

Test(vm, modes_virtio_no_vnet_hdr, .timeout = 300)
{
	run("modes.sh", "virtio-novnet");
}

Test(vm, conformance, .timeout = 400)
{
	char args[32];

	snprintf(args, sizeof(args), "%llu", (unsigned long long)gso_test_env_u64("GSO_VM_CONF_CASES", 600));
	run("conformance.sh", args);
}
