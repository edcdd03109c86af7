/*
 * The conventions of libgso-xdp's small lookups, without root: the
 * interface name helper (gso_ifindex; "lo" is in every network namespace)
 * and the name lookups, which answer NULL for a value that has no name
 * (gso_ifcaps_feature_name, gso_tso_why_name, gso_evloop_backend_name,
 * gso_dev__name of no device).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <net/if.h>
#include <string.h>

#include <gso/dev.h>
#include <gso/evloop.h>
#include <gso/ifcaps.h>

Test(names, ifindex)
{
	char longname[IF_NAMESIZE + 1];

	cr_assert_eq(gso_ifindex("lo"), (int)if_nametoindex("lo"));
	cr_assert_gt(gso_ifindex("lo"), 0);
	cr_assert_eq(gso_ifindex("nosuchif0"), -ENODEV);
	cr_assert_eq(gso_ifindex(NULL), -EINVAL);
	cr_assert_eq(gso_ifindex(""), -EINVAL);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[IF_NAMESIZE] = '\0';
	cr_assert_eq(gso_ifindex(longname), -EINVAL, "%zu characters", strlen(longname));
	longname[IF_NAMESIZE - 1] = '\0'; /* the longest a name can be, and there is no such one */
	cr_assert_eq(gso_ifindex(longname), -ENODEV);
}

Test(names, unknown_is_null)
{
	for (unsigned i = 0; i < GSO_IF_NFEATURES; i++)
		cr_assert_not_null(gso_ifcaps_feature_name(i), "feature %u", i);
	cr_assert_str_eq(gso_ifcaps_feature_name(0), "tx-scatter-gather");
	cr_assert_null(gso_ifcaps_feature_name(GSO_IF_NFEATURES));
	cr_assert_null(gso_ifcaps_feature_name(~0u));

	for (unsigned i = 0; i < GSO_TSO_WHY_COUNT; i++)
		cr_assert_not_null(gso_tso_why_name(i), "reason %u", i);
	cr_assert_null(gso_tso_why_name(GSO_TSO_WHY_COUNT));
	cr_assert_null(gso_tso_why_name(~0u));

	cr_assert_str_eq(gso_evloop_backend_name(GSO_EVLOOP_AUTO), "auto");
	cr_assert_str_eq(gso_evloop_backend_name(GSO_EVLOOP_URING), "io_uring");
	cr_assert_str_eq(gso_evloop_backend_name(GSO_EVLOOP_EPOLL), "epoll");
	cr_assert_null(gso_evloop_backend_name(GSO_EVLOOP_EPOLL + 1));
	cr_assert_null(gso_evloop_backend_name(~0u));

	cr_assert_null(gso_dev__name(NULL));
}
