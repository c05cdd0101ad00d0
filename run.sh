#!/usr/bin/env bash
# ./run.sh [lumen arguments] — installs what is missing, builds, and starts lumen.
set -euo pipefail
cd "$(dirname "$0")"
source tools/deps.sh
lumen_install_deps
LUMEN_QUIET_BUILD=1 lumen_build build
exec ./build/lumen "$@"
