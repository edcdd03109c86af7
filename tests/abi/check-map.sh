#!/bin/sh
# The ABI checks of `make check` (the check-abi target), over the libraries
# in the build directory $1 (default build):
#   - each version map names exactly the GSO_API functions of its library:
#     a GSO_API symbol the map lacks would silently become local, and a name
#     the library does not define is a typo or a removed function;
#   - each map lists one symbol a line, sorted, so that a diff shows changes;
#   - every global symbol of the static archives is prefixed: gso_* when it
#     is GSO_API (default visibility), gsoi_* when it is internal (hidden),
#     so that nothing of ours collides with the libraries we link (libxdp's
#     xsk_*) or with a user's names.  libgso-e1000.a (the e1000 model,
#     static only, never installed: no map) gets this check alone.
# GSO_API is read from the objects' symbol visibility (the libraries are
# built with -fvisibility=hidden), not from the headers.
# Prints one line per problem, naming the symbol; exits 1 if there was any.
set -u
B=${1:-build}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
status=0
export LC_ALL=C

fail() { echo "abi: $*"; status=1; }

# globals LIB: the defined globals of build/LIB.a into $tmp/all (NAME
# VISIBILITY), $tmp/api (default visibility) and $tmp/internal (hidden).
globals() {
	readelf -sW "$B/$1.a" | awk '($5 == "GLOBAL" || $5 == "WEAK") && $7 != "UND" && $4 != "FILE" \
		{ print $8, $6 }' | sort -u >"$tmp/all"
	awk '$2 == "DEFAULT" { print $1 }' "$tmp/all" | sort -u >"$tmp/api"
	awk '$2 != "DEFAULT" { print $1 }' "$tmp/all" | sort -u >"$tmp/internal"
}

# prefixes LIB: every global of $tmp/api is gso_*, of $tmp/internal gsoi_*.
prefixes() {
	for s in $(grep -v '^gso_' "$tmp/api"); do
		fail "$s is GSO_API in $1: public names start with gso_"
	done
	for s in $(grep -v '^gsoi_' "$tmp/internal"); do
		case $s in
		gso_*) fail "$s is internal to $1 (not GSO_API) but has the public prefix: name it gsoi_*" ;;
		*) fail "$s is a global symbol of $1.a without the internal prefix gsoi_ (make it static or rename it)" ;;
		esac
	done
}

# check LIB MAP: build/LIB.a, build/LIB.so and the version script MAP.
check() {
	lib=$1 map=$2
	for f in "$B/$lib.a" "$B/$lib.so" "$map"; do
		[ -r "$f" ] || { fail "$f is missing (build with make lib)"; return; }
	done
	globals "$lib"
	# The map's names, in file order (all nodes), between global: and local:.
	# Comments are dropped first (they may span lines).
	awk '{ out = ""; l = $0
		while (l != "") {
			if (c) { i = index(l, "*/"); if (!i) break; l = substr(l, i + 2); c = 0 }
			else { i = index(l, "/*"); if (!i) { out = out l; break }
				out = out substr(l, 1, i - 1); l = substr(l, i + 2); c = 1 }
		}
		print out }' "$map" |
	awk '/global:/ { g = 1; n++; next } /local:|}/ { g = 0 } g && NF { gsub(/[ \t]/, ""); print n, $0 }' >"$tmp/nlines"
	cut -d' ' -f2 "$tmp/nlines" >"$tmp/lines"
	for l in $(grep -v '^[A-Za-z_][A-Za-z0-9_]*;$' "$tmp/lines"); do
		fail "$map: '$l' is not one symbol a line ('name;')"
	done
	sed 's/;$//' "$tmp/lines" >"$tmp/listed"
	# Sorted within each node (a release adds a node of its own after the last).
	for n in $(cut -d' ' -f1 "$tmp/nlines" | sort -un); do
		awk -v n="$n" '$1 == n { sub(/;$/, "", $2); print $2 }' "$tmp/nlines" | sort -c 2>/dev/null ||
			fail "$map: the symbols of its node $n are not sorted (LC_ALL=C sort)"
	done
	sort -u "$tmp/listed" >"$tmp/listed.s"
	nm -D --defined-only "$B/$lib.so" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u >"$tmp/dyn"

	for s in $(comm -23 "$tmp/api" "$tmp/listed.s"); do
		fail "$s is GSO_API in $lib but missing from $map"
	done
	for s in $(comm -13 "$tmp/api" "$tmp/listed.s"); do
		if grep -qx "$s" "$tmp/internal"; then
			fail "$map names $s, which is not GSO_API in $lib"
		else
			fail "$map names $s, which $lib does not define"
		fi
	done
	for s in $(comm -23 "$tmp/dyn" "$tmp/listed.s"); do
		fail "$lib.so exports $s, which $map does not name"
	done
	for s in $(comm -13 "$tmp/dyn" "$tmp/listed.s"); do
		grep -qx "$s" "$tmp/api" && fail "$lib.so does not export $s, which $map names"
	done
	prefixes "$lib"
	echo "abi: $lib: $(wc -l <"$tmp/listed.s") symbols in $map, $(wc -l <"$tmp/dyn") exported," \
		"$(wc -l <"$tmp/internal") internal globals (gsoi_*)"
}

check libgso libgso/libgso.map
check libgso-xdp xdp/libgso-xdp.map
if [ -r "$B/libgso-e1000.a" ]; then
	globals libgso-e1000
	prefixes libgso-e1000
	grep -q . "$tmp/api" || fail "libgso-e1000.a defines no gso_e1000__* function"
	for s in $(grep -v '^gso_e1000__' "$tmp/api"); do
		fail "$s is GSO_API in libgso-e1000: the model's public names are gso_e1000__*"
	done
	echo "abi: libgso-e1000: $(wc -l <"$tmp/api") public, $(wc -l <"$tmp/internal") internal globals (gsoi_*), no map (static only)"
else
	fail "$B/libgso-e1000.a is missing (build with make lib)"
fi
[ $status -eq 0 ] || echo "abi: FAILED"
exit $status
