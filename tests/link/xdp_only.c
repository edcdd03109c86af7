/*
 * A program of libgso-xdp alone, as most are: it calls nothing of libgso
 * itself, so a linker with --as-needed (the default of Debian's and
 * Ubuntu's gcc) records only libgso-xdp.so.0, and libgso.so.0 is found
 * from libgso-xdp's own RUNPATH ($ORIGIN) or not at all: the program's
 * RUNPATH does not apply to a library's dependencies.  `make
 * check-install` links it with -Wl,-rpath to the scratch prefix and runs
 * it without LD_LIBRARY_PATH.  It touches no interface.
 */
#include <gso/engine.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	const char *n = gso_path_name(GSO_PATH_AUTO);

	if (!n || strcmp(n, "auto")) {
		fprintf(stderr, "xdp_only: gso_path_name(GSO_PATH_AUTO) is %s\n", n ? n : "NULL");
		return 1;
	}
	printf("xdp_only: ok (libgso-xdp loaded libgso from its own RUNPATH)\n");
	return 0;
}
