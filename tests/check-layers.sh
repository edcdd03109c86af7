#!/bin/sh
# The kernel-facing library's folders form layers, and an include only
# ever points down: a folder may include what a lower layer holds (its
# internal headers as "folder/name_internal.h", its public header as
# <gso/name.h>), never what a higher one or a sibling of its own layer
# holds.  This is what keeps "where is TCP?" answerable by folder and the
# next piece of code from growing a cycle.  Also: no source sits at xdp/'s
# top level, and every folder has a layer.  Run by `make check-layers`
# (part of `make check`); CONTRIBUTING.md's "Where code goes" names the
# same layers.
set -eu

# Bottom first; folders on one line share a layer (and may not include
# each other).  libgso/ is below all of them.
layers='
kernel evloop
dev
xsk vnet
steer e1000
engine
tcp
port
'
# The public header of each concern (xdp/include/gso/*.h, and the e1000
# model's): the folder that implements it.
pubs='
route:kernel evloop:evloop dev:dev xsk:xsk ifcaps:xsk vnet:vnet steer:steer
e1000:e1000 engine:engine port:port xdp:umbrella
'

fail=0
top=$(find xdp -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \) | sort)
if [ -n "$top" ]; then
	echo "check-layers: sources at xdp/'s top level (each goes in its concern's folder):" $top >&2
	fail=1
fi

out=$(
	for f in $(find xdp -mindepth 2 -maxdepth 2 -type f \( -name '*.c' -o -name '*.h' \) | sort); do
		grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' "$f" || true
	done | awk -v layers="$layers" -v pubs="$pubs" '
	BEGIN {
		n = split(layers, lines, "\n")
		rank = 0
		for (i = 1; i <= n; i++) {
			if (lines[i] ~ /^[[:space:]]*$/)
				continue
			k = split(lines[i], fs, " ")
			for (j = 1; j <= k; j++)
				layer[fs[j]] = rank
			rank++
		}
		layer["umbrella"] = rank   # <gso/xdp.h>: above everything, for users only
		k = split(pubs, ps, /[ \n]+/)
		for (i = 1; i <= k; i++)
			if (split(ps[i], kv, ":") == 2)
				pub[kv[1]] = kv[2]
		bad = 0; edges = 0
	}
	{
		file = $0; sub(/:.*/, "", file)
		line = $0; sub(/^[^:]*:/, "", line); ln = line; sub(/:.*/, "", ln); sub(/^[^:]*:/, "", line)
		split(file, p, "/"); from = p[2]
		if (!(from in layer)) {
			if (!(from in unknown))
				printf "check-layers: xdp/%s/ has no layer: add it to tests/check-layers.sh and CONTRIBUTING.md\n", from
			unknown[from] = 1; bad++
			next
		}
		to = ""
		if (match(line, /"[a-z0-9_]+\/[^"]+"/)) {
			inc = substr(line, RSTART + 1, RLENGTH - 2)
			to = inc; sub(/\/.*/, "", to)
		} else if (match(line, /<gso\/[a-z0-9_]+\.h>/)) {
			inc = substr(line, RSTART + 5, RLENGTH - 8)
			if (inc in pub)
				to = pub[inc]
		}
		if (to == "" || to == from)
			next
		edges++
		if (!(to in layer)) {
			printf "check-layers: %s:%s includes from xdp/%s/, which has no layer\n", file, ln, to
			bad++
		} else if (layer[to] >= layer[from]) {
			printf "check-layers: %s:%s: %s/ includes %s (%s/ is %s)\n", file, ln, from,
				substr(line, RSTART, RLENGTH), to, layer[to] == layer[from] ? "a sibling" : "a higher layer"
			bad++
		}
	}
	END {
		printf "check-layers: %d includes across folders, %d pointing up or sideways\n", edges, bad
		exit bad ? 1 : 0
	}'
) || fail=1
echo "$out" | grep -v '^check-layers: [0-9]* includes' >&2 || true
echo "$out" | grep '^check-layers: [0-9]* includes' || true
exit $fail
