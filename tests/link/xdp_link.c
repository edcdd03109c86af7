/*
 * Link check for the installed libgso-xdp: built against libgso-xdp.pc
 * (shared and static), it must resolve and run, and the umbrella header
 * must compile against the installed headers alone.  It only reads the
 * clock: the check must not touch any interface.
 */
#include <gso/xdp.h> /* the umbrella: every installed libgso-xdp header */
#include <stdio.h>

int main(void)
{
	uint64_t a = gso_evloop_now_ns(), b = gso_evloop_now_ns();

	if (!a || b < a) {
		fprintf(stderr, "xdp_link: clock went backwards\n");
		return 1;
	}
	/* A backend constructor's address, printed, so the linker must resolve it. */
	int (*create)(struct gso_dev **, int, const struct gso_xsk_opts *) = gso_xsk__create;
	volatile uintptr_t addr = (uintptr_t)create;

	printf("xdp_link: ok (gso_xsk__create at %#lx)\n", (unsigned long)addr);
	return 0;
}
