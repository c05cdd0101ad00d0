#!/bin/sh
# docs_names.sh DOC... — every identifier and file a design document names (in backticks) still
# exists: identifiers with Lumen's prefixes (lm_, lmi_, lml_, vz_, LM_, LMI_, LML_) are looked up in
# src/, include/, tests/, tools/ and lua/; paths under src/, include/, tests/, tools/, lua/,
# lessons/, bench/ and docs/ must exist. A rename that leaves the account behind fails here.
# Run from the source root (ctest core/docs_names does).
set -u
status=0
for doc in "$@"; do
	[ -f "$doc" ] || { echo "docs_names: $doc: no such file"; status=1; continue; }
	# backticked spans, one per line
	grep -o '`[^`]*`' "$doc" | tr -d '`' | tr ' ,;()' '\n\n\n\n\n' | sort -u > "${TMPDIR:-/tmp}/docs_names.$$"
	while read -r tok; do
		case $tok in
		*'<'* | *'>'* | *'*'* | *'...'* | *'{'*) continue ;; # a pattern (lmi_bw_<rule>, test_*.c, graph.{h,c})
		src/* | include/* | tests/* | tools/* | lua/* | lessons/* | bench/* | docs/*)
			p=${tok%%:*}          # src/file.c:123 -> src/file.c
			p=${p%/}
			case $p in lessons/x.lua) continue ;; esac # the format's example of a message
			[ -e "$p" ] || { echo "docs_names: $doc names $tok, which does not exist"; status=1; } ;;
		lm_* | lmi_* | lml_* | vz_* | LM_* | LMI_* | LML_*)
			name=$(printf '%s' "$tok" | sed 's/[^A-Za-z0-9_].*//')
			[ -n "$name" ] || continue
			grep -rqw -- "$name" src include tests tools lua 2>/dev/null ||
				{ echo "docs_names: $doc names $name, which no source defines or uses"; status=1; } ;;
		esac
	done < "${TMPDIR:-/tmp}/docs_names.$$"
	rm -f "${TMPDIR:-/tmp}/docs_names.$$"
done
[ $status -eq 0 ] && echo "docs_names: every name in $* exists"
exit $status
