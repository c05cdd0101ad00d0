#!/bin/sh
# type_switches.sh — what an element is (its size, name, range, conversions) is asked of the type
# table (lm_dtype_traits, src/core/dtype.c), never switched on: outside the devices, whose loops
# pick a typed instantiation (src/backend/cpu, src/backend/cuda, src/backend/opencl), no `switch` on a dtype remains.
# Issue 30 counted 30 such switches before the table and 13 after, all inside the devices.
cd "$(dirname "$0")/../.." || exit 2
re='switch *\((dt|dtype|[a-z_]+->dtype|[a-z_]+\.dtype|lm_dtype_size\([^)]*\))\)'
# the check must be able to fail
[ "$(printf 'switch (x->dtype) {\n\tswitch (dt) {\n' | grep -cE "$re")" = 2 ] ||
	{ echo "type_switches: the probe was not detected"; exit 1; }
found=$(grep -rnE "$re" src --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' |
	grep -vE '^src/backend/(cpu|cuda|opencl)/')
if [ -n "$found" ]; then
	echo "type_switches: a switch on a dtype outside the devices (ask lm_dtype_traits_of instead):"
	printf '%s\n' "$found" | sed 's/^/  /'
	exit 1
fi
echo "type_switches: none outside the devices ($(grep -rnE "$re" src/backend | wc -l) inside them)"
