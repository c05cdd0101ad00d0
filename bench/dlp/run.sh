#!/usr/bin/env bash
# bench/dlp/run.sh — bench/dlp/run.lua: lumen.dlp on AlexNet in three dataflows; with SCALESIM_PYTHON
# set (a Python with scalesim 3.0.0 and numpy<2), SCALE-Sim's time for the same work in the same run.
#   ./bench/dlp/run.sh                      # lumen.dlp alone
#   SCALESIM_PYTHON=/tmp/ssenv/bin/python ./bench/dlp/run.sh [--modes calc]
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x build/lumen ] || { source tools/deps.sh; lumen_build build; }
if [ -n "${SCALESIM_PYTHON:-}" ]; then
	exec ./build/lumen bench/dlp/run.lua --scalesim "$SCALESIM_PYTHON" "$@"
fi
exec ./build/lumen bench/dlp/run.lua "$@"
