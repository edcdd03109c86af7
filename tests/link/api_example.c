/*
 * The README's API example as a whole program.  `make check` installs the
 * library into a scratch DESTDIR and builds this against the installed
 * headers, libgso.pc, the shared and the static library, then runs it: the
 * example in the README stays true and the installed artefacts usable.
 */
#include <gso/gso.h>
#include <stdio.h>
#include <stdlib.h>

static uint8_t data[65000];
static uint8_t bufs[64][2048];

int main(void)
{
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);

	/* --- README example starts --- */
	/* Headers of the flow, once. */
	GSO_OPTS(gso_tmpl_fields, f, .l3 = GSO_L3_IPV4, .l4 = GSO_L4_TCP, .df = true,
		 .sport = 40000, .dport = 5201, .seq = 1, .tcp_flags = GSO_TCP_ACK | GSO_TCP_PSH,
		 .window = 512);
	memcpy(f.saddr, (uint8_t[]){10, 0, 0, 1}, 4);
	memcpy(f.daddr, (uint8_t[]){10, 0, 0, 2}, 4);
	struct gso_tmpl t;
	int err = gso_tmpl__build(&t, &f);                 /* 0 or -errno, nothing half-done */

	/* A 64 KiB super-segment, cut into MSS-sized frames with checksums. */
	struct gso_extent payload = { .base = data, .len = 65000 };
	struct gso_super s = { .tmpl = &t, .ext = &payload, .n_ext = 1 };
	GSO_OPTS(gso_seg_opts, o, .mss = 1448, .csum = GSO_CSUM_FULL);
	struct gso_frame out[64];
	for (int i = 0; i < 64; i++)
		out[i] = (struct gso_frame){ .buf = bufs[i], .cap = 2048 };
	int n = gso_segment(&s, &o, out, 64);             /* frames, or -EINVAL/-E2BIG/-ENOSPC/... */
	/* --- README example ends --- */

	if (err || n != 45) {
		fprintf(stderr, "api_example: gso_tmpl__build %d, gso_segment %d (want 0, 45)\n", err, n);
		return 1;
	}
	size_t total = 0;
	for (int i = 0; i < n; i++)
		total += out[i].len - t.hdr_len;
	/* Every frame's IPv4 header checksum must verify to zero. */
	for (int i = 0; i < n; i++)
		if (gso_csum_fold(gso_csum_partial((uint8_t *)out[i].buf + t.l3_off,
						   (size_t)(t.l4_off - t.l3_off), 0)) != 0xffff) {
			fprintf(stderr, "api_example: frame %d: bad IPv4 checksum\n", i);
			return 1;
		}
	if (total != sizeof(data)) {
		fprintf(stderr, "api_example: %zu payload bytes out, want %zu\n", total, sizeof(data));
		return 1;
	}
	printf("api_example: %d frames, %zu payload bytes (%s checksums)\n", n, total,
	       gso_csum_impl_name(gso_csum_current()));
	return 0;
}
