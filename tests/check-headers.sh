#!/bin/sh
# Every public header compiles alone, in every language mode the headers
# promise (<gso/common.h>): a translation unit that includes only that
# header, as ISO C11 and as C++11 and C++20, with gcc and clang, -pedantic,
# warnings as errors.  Then tests/link/opts_decl.c, which declares options
# structs with GSO_OPTS on a dirty stack and hands them to libgso, is built
# as C11 and as C++20 with both compilers at -O0 and -O2, linked with
# $B/libgso.a and run; and the headers' text cites nothing that is not
# installed.  Run by `make check-headers` (part of `make check`).
set -eu

B=${B:-build}
CC=${CC:-gcc}
CLANG=${CLANG:-clang}
CXX=${CXX:-g++}
CLANGXX=${CLANGXX:-clang++}
out=$B/check-headers
# The e1000 model's header (xdp/e1000/include) is not installed, but bench
# and tests include it: it stands alone too.
inc="-Ilibgso/include -Ixdp/include -Ixdp/e1000/include"
hdrs="libgso/include/gso/*.h xdp/include/gso/*.h xdp/e1000/include/gso/*.h"
cflags="-std=c11 -pedantic -Wall -Wextra -Werror"
# g++'s -Wextra warns about every field a designated initializer leaves
# out, which is what GSO_OPTS is for; the header says so.
cxxflags="-pedantic -Wall -Wextra -Werror -Wno-missing-field-initializers"

rm -rf "$out" && mkdir -p "$out"
fail=0
n=0

# try TAG COMMAND...: run it, its output in $out/TAG.log; report a failure.
try() {
	t=$1
	shift
	if ! "$@" >"$out/$t.log" 2>&1; then
		echo "check-headers: FAIL $t: $*" >&2
		sed 's/^/  /' "$out/$t.log" | head -20 >&2
		fail=1
	fi
	n=$((n + 1))
}

for h in $hdrs; do
	name=$(basename "$h" .h)
	printf '#include <gso/%s.h>\n' "$name" >"$out/$name.c"
	cp "$out/$name.c" "$out/$name.cc"
	try "$name-gcc-c11" $CC $cflags $inc -fsyntax-only "$out/$name.c"
	try "$name-clang-c11" $CLANG $cflags $inc -fsyntax-only "$out/$name.c"
	for std in c++11 c++20; do
		try "$name-g++-$std" $CXX -std=$std $cxxflags $inc -fsyntax-only "$out/$name.cc"
		try "$name-clang++-$std" $CLANGXX -std=$std $cxxflags $inc -fsyntax-only "$out/$name.cc"
	done
done

for opt in -O0 -O2; do
	for c in "gcc $CC -x c $cflags" "clang $CLANG -x c $cflags" \
		 "g++ $CXX -x c++ -std=c++20 $cxxflags" "clang++ $CLANGXX -x c++ -std=c++20 $cxxflags"; do
		tag=opts_decl-${c%% *}$opt
		set -- $c
		shift
		try "$tag" "$@" $opt -Ilibgso/include -c -o "$out/$tag.o" tests/link/opts_decl.c
		[ -f "$out/$tag.o" ] || continue
		try "$tag-link" "$1" -o "$out/$tag" "$out/$tag.o" "$B/libgso.a" -lm
		[ -x "$out/$tag" ] || continue
		try "$tag-run" "$out/$tag"
	done
done

# Installed headers stand on their own: no citations of documents that are
# not installed, no paths into the source tree, no one machine's figures
# (those belong in README.md).
bad='offload-reference|design\.md|README|§|\.\./shared|(^|[^a-z0-9_/.])(libgso|xdp|tools|bench|tests|examples|build)/[a-z0-9_]+|measured on|this (machine|VM)|Gbit/s'
if grep -inE "$bad" $hdrs >"$out/text.log"; then
	echo "check-headers: FAIL: public headers cite what is not installed or one machine's figures:" >&2
	sed 's/^/  /' "$out/text.log" >&2
	fail=1
fi

if [ "$fail" != 0 ]; then
	echo "check-headers: failed (logs in $out)" >&2
	exit 1
fi
echo "check-headers: $n compiles, links and runs passed"
