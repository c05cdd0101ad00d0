#!/usr/bin/env bash
# bench/quant/cnn.sh — int8 inference at batch 256 in the same run: examples/cnn_fashion.lua's CNN
# (and the 784-256-10 MLP) in Lumen, float32 against int8 (nn.quantized: u8 x s8 int_mm), beside
# PyTorch's float32 and its quantized engine (onednn, eager static quantization), 1 and 2 threads,
# median of 15 calls each. Needs /usr/bin/python3 with torch (Debian's python3-torch).
#   usage: bench/quant/cnn.sh [path/to/lumen]     (under the machine's lock:
#          flock /tmp/lumen-cpu.lock bench/quant/cnn.sh build/lumen)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lumen=${1:-$root/build/lumen}
py=/usr/bin/python3
"$py" -c 'import torch' 2>/dev/null || { echo "bench/quant/cnn.sh: $py lacks torch (apt-get install python3-torch)" >&2; exit 1; }
printf '%-8s %-6s %-22s %12s %12s %10s\n' threads model impl 'float32 ms' 'int8 ms' 'f32/int8'
for t in 1 2; do
	while read -r line; do
		"$py" - "$line" "$t" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
print("%-8s %-6s %-22s %12.2f %12.2f %10.2f" % (sys.argv[2], d.get("model", "cnn"), d["impl"] + (" " + d["engine"] if "engine" in d else ""),
      d["float32_ms"], d["int8_ms"], d["float32_ms"] / d["int8_ms"]))
PY
	done < <("$lumen" "$root/bench/quant/cnn_int8.lua" "$t"; "$py" "$root/bench/quant/torch_cnn_int8.py" --threads "$t")
done
echo "(CPU measured on this machine, median of 15 calls after a warm-up; PyTorch's int8: per-channel int8 weights, uint8 activations, conv+ReLU fused)"
