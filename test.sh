#!/usr/bin/env bash
# ./test.sh — installs what is missing, builds, and runs the whole test suite twice: in the
# release build (C tests, Lua tests) and in an AddressSanitizer + UBSan build. Exits non-zero on
# any failure. CI (.ci/run) calls this.
set -euo pipefail
cd "$(dirname "$0")"
source tools/deps.sh
lumen_install_deps

start=$(date +%s)
echo "== release build"
lumen_build build
echo "== tests (release)"
ctest --test-dir build --output-on-failure -j2

echo "== sanitizer build (ASan + UBSan)"
LUMEN_BUILD_TYPE=RelWithDebInfo lumen_build build-asan -DLUMEN_SANITIZE=ON -DLUMEN_CUDA=OFF
echo "== tests (sanitizers)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0" \
	ctest --test-dir build-asan --output-on-failure -j2
echo "== all tests passed in $(( $(date +%s) - start )) s"
