/*
 * The "netdev" generic netlink family (Linux 6.3+): XDP features, zero-copy
 * segment limit and xsk TX metadata features of one interface.  Two
 * requests over a raw NETLINK_GENERIC socket; no libnl.
 */
#include "compat.h"
#include "link_internal.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#define NL_BUF 8192

struct nl_req {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	uint8_t attrs[64];
};

static void put_attr(struct nl_req *r, uint16_t type, const void *data, uint16_t len)
{
	struct nlattr *a = (struct nlattr *)((uint8_t *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((uint8_t *)a + NLA_HDRLEN, data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Send `r`, receive one answer into buf; returns its genl payload length or -errno. */
static int transact(int fd, struct nl_req *r, uint8_t *buf, struct nlmsghdr **out)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	ssize_t n;

	if (sendto(fd, r, r->nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	n = recv(fd, buf, NL_BUF, 0);
	if (n < 0)
		return -errno;
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	if (!NLMSG_OK(nh, (unsigned)n))
		return -EPROTO;
	if (nh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nh);
		return e->error ? e->error : -EPROTO;
	}
	*out = nh;
	return 0;
}

/* Walk the attributes after the genl header; calls back per attribute. */
#define FOR_ATTRS(nh, a, rem)                                                          \
	for (struct nlattr *a = (struct nlattr *)((uint8_t *)NLMSG_DATA(nh) + GENL_HDRLEN); \
	     (rem) >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= (rem);    \
	     (rem) -= NLA_ALIGN(a->nla_len), a = (struct nlattr *)((uint8_t *)a + NLA_ALIGN(a->nla_len)))

static void *attr_data(struct nlattr *a)
{
	return (uint8_t *)a + NLA_HDRLEN;
}

static int family_id(int fd, uint8_t *buf)
{
	struct nl_req r;
	struct nlmsghdr *nh;
	int err, rem;

	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.nh.nlmsg_type = GENL_ID_CTRL;
	r.nh.nlmsg_flags = NLM_F_REQUEST;
	r.nh.nlmsg_seq = 1;
	r.gh.cmd = CTRL_CMD_GETFAMILY;
	r.gh.version = 1;
	put_attr(&r, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY_NAME, sizeof(NETDEV_FAMILY_NAME));
	err = transact(fd, &r, buf, &nh);
	if (err)
		return err;
	rem = (int)nh->nlmsg_len - (int)NLMSG_LENGTH(GENL_HDRLEN);
	FOR_ATTRS(nh, a, rem)
		if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID && a->nla_len >= NLA_HDRLEN + 2) {
			uint16_t id;
			memcpy(&id, attr_data(a), 2);
			return id;
		}
	return -ENOENT;
}

int gsoi_xsk_netdev_get(int ifindex, uint64_t *xdp_features, uint32_t *zc_max_segs,
			uint64_t *xsk_features)
{
	static __thread uint8_t buf[NL_BUF] __attribute__((aligned(8)));
	struct timeval tv = { .tv_sec = 1 };
	struct nl_req r;
	struct nlmsghdr *nh;
	uint32_t idx = (uint32_t)ifindex;
	uint64_t xf = 0, kf = 0;
	uint32_t zc = 0;
	int fd, fam, err, rem;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	fam = family_id(fd, buf);
	if (fam < 0) {
		close(fd);
		/* The controller answers ENOENT for a family this kernel lacks. */
		return fam;
	}
	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.nh.nlmsg_type = (uint16_t)fam;
	r.nh.nlmsg_flags = NLM_F_REQUEST;
	r.nh.nlmsg_seq = 2;
	r.gh.cmd = NETDEV_CMD_DEV_GET;
	r.gh.version = 1;
	put_attr(&r, NETDEV_A_DEV_IFINDEX, &idx, sizeof(idx));
	err = transact(fd, &r, buf, &nh);
	close(fd);
	if (err)
		return err;
	rem = (int)nh->nlmsg_len - (int)NLMSG_LENGTH(GENL_HDRLEN);
	FOR_ATTRS(nh, a, rem) {
		unsigned t = a->nla_type & NLA_TYPE_MASK, l = a->nla_len - NLA_HDRLEN;
		if (t == NETDEV_A_DEV_XDP_FEATURES && l >= 8)
			memcpy(&xf, attr_data(a), 8);
		else if (t == NETDEV_A_DEV_XDP_ZC_MAX_SEGS && l >= 4)
			memcpy(&zc, attr_data(a), 4);
		else if (t == NETDEV_A_DEV_XSK_FEATURES && l >= 8)
			memcpy(&kf, attr_data(a), 8);
	}
	*xdp_features = xf;
	*zc_max_segs = zc;
	*xsk_features = kf;
	return 0;
}
