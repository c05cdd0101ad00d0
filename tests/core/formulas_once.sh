#!/bin/sh
# formulas_once.sh — the formulas of one element are written once, in src/backend/scalar_math.h,
# for the CPU's loops and the CUDA module's kernels (docs/architecture.md, "Scalar math"). Each
# formula is known here by a fragment only its own text contains; the check fails when a fragment
# stands in any other file of src/backend (a formula written again for one device).
cd "$(dirname "$0")/../.." || exit 2
status=0

# "what: fragment (an extended regular expression)"
fragments='
GELU: 0\.044715
GELU: 0\.797884560
floor division and remainder: fmod[f]?\(
sort keys: 0x80000000
sigmoid: \(T\)1 / \(\(T\)1 \+ exp
sign: v != v \? v : \(T\)
maximum and minimum with NaN: != \(?a\)? \|\| \(?b\)? != \(?b
integer pow: [^a-z_]e >>= 1
INT_MIN // -1: 0 - \(UT\)a
SGD momentum: \* mo \+ d \* damp
Adam denominator: / (k->)?bc2s
RMSprop centered: a \* a \* \(T\)-1
'

# the check must be able to fail: a planted formula is found
probe=$(mktemp -d)
mkdir -p "$probe/src/backend/cpu"
printf 'static double g(double x) { return tanh(0.7978845608 * (x + 0.044715 * x * x * x)); }\n' \
	> "$probe/src/backend/cpu/probe.c"
found() { # $1 the tree; prints "file: what" for every fragment outside scalar_math.h
	printf '%s\n' "$fragments" | while IFS= read -r line; do
		[ -n "$line" ] || continue
		what=${line%%: *}
		re=${line#*: }
		grep -rlE --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' "$re" \
			"$1/src/backend" 2>/dev/null | grep -v '/scalar_math\.h$' | sed "s|^$1/||; s|\$|: $what|"
	done
}
[ "$(found "$probe" | grep -c GELU)" = 2 ] || { echo "formulas_once: the planted GELU was not found"; status=1; }
rm -rf "$probe"
# every fragment must name something scalar_math.h really holds (a fragment that matches nothing
# there would check nothing)
printf '%s\n' "$fragments" | while IFS= read -r line; do
	[ -n "$line" ] || continue
	grep -qE "${line#*: }" src/backend/scalar_math.h ||
		{ echo "formulas_once: '${line%%: *}' is not in src/backend/scalar_math.h"; exit 1; }
done || status=1

again=$(found .)
if [ -n "$again" ]; then
	echo "formulas_once: a formula of src/backend/scalar_math.h written again:"
	printf '%s\n' "$again" | sed 's/^/  /'
	status=1
fi
[ $status = 0 ] && echo "formulas_once: $(printf '%s\n' "$fragments" | grep -c .) formulas, each written once"
exit $status
