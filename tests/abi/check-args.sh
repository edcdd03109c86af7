#!/bin/sh
# CONTRIBUTING.md's C2, checked on every GSO_API declaration of the public
# headers: a constructor, a function that hands back a library object (a
# parameter `struct gso_X **`), takes it first and its options structs
# (`const struct gso_X_opts *`) last.  (Calls on plain data, such as
# gso_segment(tmpl, opts, out, n), are C1's free functions: C2 does not
# order them.)  One argument order everywhere
# is what lets a user write a call from memory; a function that breaks it
# compiles cleanly, so only this catches it.  Run by `make check-abi`.
# Prints one line per violation; exits 1 if there was any.
set -eu
export LC_ALL=C

hdrs=${*:-libgso/include/gso/*.h xdp/include/gso/*.h xdp/e1000/include/gso/*.h}

# shellcheck disable=SC2086
cat $hdrs | awk '
	# Comments out (a declaration never sits inside one), then one
	# declaration per record: from GSO_API to its semicolon.
	{
		line = $0
		while (1) {
			if (incomment) {
				if ((i = index(line, "*/")) == 0) { line = ""; break }
				line = substr(line, i + 2); incomment = 0
			}
			if ((i = index(line, "/*")) == 0) break
			rest = substr(line, i + 2); line = substr(line, 1, i - 1)
			if ((j = index(rest, "*/")) == 0) { incomment = 1; break }
			line = line " " substr(rest, j + 2)
		}
		sub(/\/\/.*/, "", line)
		if (!indecl && line ~ /^[[:space:]]*GSO_API[[:space:]]/) { indecl = 1; decl = "" }
		if (indecl) {
			decl = decl " " line
			if (index(line, ";")) { check(decl); indecl = 0 }
		}
	}
	function check(d,    name, params, n, p, k, seen_opts, t) {
		if (!match(d, /[a-z0-9_]+[[:space:]]*\(/))
			return
		name = substr(d, RSTART, RLENGTH); sub(/[[:space:]]*\($/, "", name)
		params = substr(d, RSTART + RLENGTH)
		sub(/\)[^)]*;.*$/, "", params)
		n = split(params, p, ",")
		decls++
		seen_opts = 0
		if (params !~ /struct gso_[a-z0-9_]+[[:space:]]*\*[[:space:]]*\*/)
			return
		ctors++
		for (k = 1; k <= n; k++) {
			t = p[k]; gsub(/[[:space:]]+/, " ", t)
			if (t ~ /struct gso_[a-z0-9_]+ ?\*\*/ && k != 1) {
				printf "args: %s: the object it makes (%s) is parameter %d; C2 puts it first\n", name, t, k
				bad++
			}
			if (t ~ /const struct gso_[a-z0-9_]+_opts ?\*/)
				seen_opts = 1
			else if (seen_opts) {
				printf "args: %s: parameter %d (%s) follows an options struct; C2 puts options last\n", name, k, t
				bad++
			}
		}
	}
	END {
		printf "args: %d GSO_API declarations, %d constructors, %d out of C2 order\n", decls, ctors, bad
		exit bad ? 1 : 0
	}'
