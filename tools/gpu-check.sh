#!/bin/sh
# tools/gpu-check.sh — builds tools/gpu-check (Lumen's CUDA kernels, their CPU runs and a driver)
# with CMake and nvcc alone, then runs every pattern's CUDA run against the CPU on random inputs,
# including sizes that are not powers of two, and prints one table of times and GB/s.
# Then the lectures' comparisons: the emulator's modelled cycles beside CUDA's times of the same
# kernels, and whether they rank alike (--model: the model's column only, without a GPU).
# Last, one epoch of the examples' MLP and CNN on Fashion-MNIST on the CPU and on the GPU through
# liblumen built core-only (tools/gpu-check/epoch.c: no Lua there), unless --no-epoch.
# Exit status: 0 all equal, 1 a mismatch, a CUDA error or a failed epoch, 2 no GPU here (the
# build still ran).
# Usage: tools/gpu-check.sh [--quick] [--model] [--no-epoch]
#   Build directories: $GPU_CHECK_BUILD (default /tmp/lumen-gpu-check) and the same with -core.
#   Data: $GPU_CHECK_DATA, else data/fashion-mnist/ in the tree (copy the four .gz files there
#   to carry them to a GPU machine), else /usr/share/datasets/fashion-mnist.
# See docs/gpu-check.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${GPU_CHECK_BUILD:-${TMPDIR:-/tmp}/lumen-gpu-check}
jobs=$(nproc 2>/dev/null || echo 2)

epoch=1
args=""
for a in "$@"; do
	if [ "$a" = "--no-epoch" ]; then epoch=0; else args="$args $a"; fi
done

command -v cmake >/dev/null 2>&1 || { echo "gpu-check: cmake is needed" >&2; exit 1; }
nvcc=$(command -v nvcc 2>/dev/null || true)
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
[ -z "$nvcc" ] && { echo "gpu-check: nvcc (the CUDA toolkit) is needed" >&2; exit 1; }

arch=""
[ -n "${GPU_CHECK_ARCH:-}" ] && arch="-DCMAKE_CUDA_ARCHITECTURES=$GPU_CHECK_ARCH"
echo "gpu-check: building in $build with $nvcc"
cmake -S "$here/gpu-check" -B "$build" -DCMAKE_CUDA_COMPILER="$nvcc" $arch >"$build.log" 2>&1 ||
	{ cat "$build.log" >&2; exit 1; }
cmake --build "$build" -j "$jobs" >>"$build.log" 2>&1 ||
	{ tail -40 "$build.log" >&2; exit 1; }
echo "gpu-check: built $build/gpu_check"
rc=0
# shellcheck disable=SC2086 # the options, one word each
"$build/gpu_check" $args || rc=$?
case " $args " in *" --model "*) exit $rc ;; esac
[ $epoch = 1 ] && [ $rc -ne 2 ] || exit $rc

# ---------------------------------------------------------------- the MLP and CNN epochs
core="$build-core"
echo
echo "gpu-check: building liblumen core-only in $core (the log: $core.log) for the epochs"
if ! { cmake -S "$root" -B "$core" -DLUMEN_CORE_ONLY=ON -DLUMEN_CUDA=ON -DCMAKE_BUILD_TYPE=Release \
	-DCMAKE_CUDA_COMPILER="$nvcc" $arch && cmake --build "$core" -j "$jobs"; } >"$core.log" 2>&1; then
	echo "gpu-check: FAILED: liblumen did not build here; the end of $core.log:"
	tail -15 "$core.log"
	exit 1
fi
data=""
for d in "${GPU_CHECK_DATA:-}" "$root/data/fashion-mnist" /usr/share/datasets/fashion-mnist; do
	if [ -n "$d" ] && { [ -r "$d/train-images-idx3-ubyte.gz" ] || [ -r "$d/train-images-idx3-ubyte" ]; }; then
		data=$d
		break
	fi
done
if [ -z "$data" ]; then
	echo "gpu-check: FAILED: no Fashion-MNIST for the epochs: copy the four .gz files of"
	echo "  /usr/share/datasets/fashion-mnist into data/fashion-mnist/ (or set GPU_CHECK_DATA)"
	exit 1
fi
# uncompressed once (the core-only build may lack zlib)
if command -v gzip >/dev/null 2>&1 && [ -r "$data/train-images-idx3-ubyte.gz" ]; then
	mkdir -p "$core/data"
	for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
		[ -r "$core/data/$f" ] || gzip -dc "$data/$f.gz" >"$core/data/$f"
	done
	data="$core/data"
fi
echo "the MLP (784-256-10) and the CNN of examples/, one epoch of Fashion-MNIST each (batch 128, SGD"
echo "lr 0.1; tools/gpu-check/epoch.c through liblumen; seconds of the training loop)"
printf '%-6s %-6s %10s %12s %10s %12s\n' model device s/epoch images/s loss accuracy
for m in mlp cnn; do
	for dev in cpu cuda; do
		out=$("$core/gpu_epoch" --model $m --device $dev --data "$data" 2>&1) || {
			echo "$m $dev FAILED: $out"
			rc=1
			continue
		}
		line=$(echo "$out" | grep " epoch 1: ")
		s=$(echo "$line" | sed -n 's/.*epoch 1: \([0-9.]*\) s.*/\1/p')
		ips=$(echo "$line" | sed -n 's/.* s, \([0-9]*\) images\/s.*/\1/p')
		loss=$(echo "$line" | sed -n 's/.*train loss \([0-9.]*\),.*/\1/p')
		acc=$(echo "$line" | sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p')
		printf '%-6s %-6s %10s %12s %10s %11s%%\n' $m $dev "$s" "$ips" "$loss" "$acc"
		eval "t_${m}_${dev}=$s"
		eval "a_${m}_${dev}=$acc"
	done
	eval "tc=\${t_${m}_cpu:-}; tg=\${t_${m}_cuda:-}; ac=\${a_${m}_cpu:-}; ag=\${a_${m}_cuda:-}"
	if [ -n "$tc" ] && [ -n "$tg" ]; then
		# the two devices learn alike: test accuracies within 2 points (same initialisation and
		# batches; the sums' order differs)
		awk -v c="$tc" -v g="$tg" -v ac="$ac" -v ag="$ag" -v m=$m 'BEGIN {
			d = ac - ag; if (d < 0) d = -d
			printf "%s: the GPU epoch %.2fx the CPU'"'"'s speed; accuracies %s%% and %s%%: %s\n", m, c / g, ac, ag,
				d <= 2 ? "ok" : "FAILED (more than 2 points apart)"
			exit d > 2 }' || rc=1
	fi
done
exit $rc
