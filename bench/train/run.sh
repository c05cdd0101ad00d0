#!/usr/bin/env bash
# bench/train — training Fashion-MNIST end to end, Lumen against PyTorch CPU in the same run: the
# same models (examples/mlp_fashion.lua's 784-256-10 MLP and cnn_fashion.lua's CNN), data (the
# same IDX files), batch 128, SGD lr 0.1, epochs and thread counts. Prints seconds per training
# epoch (median of the epochs after the first; the first, warming caches, is shown too), the ratio
# Lumen / PyTorch (lower is better), test accuracy, peak RSS of each process, and one epoch of
# DataLoader batches (shuffled, no training).
#
# Threads: Lumen calls lm.set_num_threads(N) (its OpenMP loops and the OpenMP OpenBLAS together).
# PyTorch gets OPENBLAS_NUM_THREADS=OMP_NUM_THREADS=MKL_NUM_THREADS=N before import and
# torch.set_num_threads(N) (bench/train/torch_train.py; Debian's torch runs its matmuls in the
# pthread OpenBLAS, which reads its own variable). The PyTorch anchor is the standard
# torch.utils.data.DataLoader over a TensorDataset; "PyTorch (index)" gathers batches as
# x[perm[i:i+128]], the fastest plain-PyTorch loop, shown for reference.
#
#   usage: bench/train/run.sh [path/to/lumen]   (env: EPOCHS_MLP=4 EPOCHS_CNN=2 THREADS="1 2")
# Run it under the machine's lock: flock /tmp/lumen-cpu.lock bench/train/run.sh build/lumen
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lumen=${1:-${LUMEN:-$root/build/lumen}}
[ -x "$lumen" ] || { echo "bench/train: $lumen is not an executable (build first)" >&2; exit 1; }
py=/usr/bin/python3
"$py" -c 'import torch, numpy' 2>/dev/null || { echo "bench/train: $py lacks torch or numpy (python3-torch)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run() { # name command...: JSON lines into $out/name, plus the peak RSS from /usr/bin/time
	local name=$1
	shift
	/usr/bin/time -f '{"time_rss_mb": %M}' -o "$out/$name.rss" "$@" > "$out/$name" 2> "$out/$name.err" ||
		{ echo "bench/train: $name failed:" >&2; cat "$out/$name.err" >&2; exit 1; }
}

for t in ${THREADS:-1 2}; do
	run "lumen_dl_$t" "$lumen" "$root/bench/train/lumen_train.lua" --dataloader-only --threads "$t"
	run "lumen_mlp_$t" "$lumen" "$root/bench/train/lumen_train.lua" --model mlp --threads "$t" --epochs "${EPOCHS_MLP:-4}"
	run "torch_mlp_$t" "$py" "$root/bench/train/torch_train.py" --model mlp --threads "$t" --epochs "${EPOCHS_MLP:-4}"
	run "torchidx_mlp_$t" "$py" "$root/bench/train/torch_train.py" --model mlp --threads "$t" --epochs "${EPOCHS_MLP:-4}" --loader index
	run "lumen_cnn_$t" "$lumen" "$root/bench/train/lumen_train.lua" --model cnn --threads "$t" --epochs "${EPOCHS_CNN:-2}"
	run "torch_cnn_$t" "$py" "$root/bench/train/torch_train.py" --model cnn --threads "$t" --epochs "${EPOCHS_CNN:-2}"
	if [ "$t" -gt 1 ]; then # PyTorch's best configuration here: OpenBLAS on one thread, torch's pool on t
		run "torchb1_mlp_$t" "$py" "$root/bench/train/torch_train.py" --model mlp --threads "$t" --blas-threads 1 --epochs "${EPOCHS_MLP:-4}"
		run "torchb1_cnn_$t" "$py" "$root/bench/train/torch_train.py" --model cnn --threads "$t" --blas-threads 1 --epochs "${EPOCHS_CNN:-2}"
	fi
done

"$py" - "$out" "${THREADS:-1 2}" "$("$lumen" --version | head -2 | tr '\n' ' ')" <<'PY'
import json, os, statistics, sys
out, threads, version = sys.argv[1], sys.argv[2].split(), sys.argv[3]

def load(name):
    rows = [json.loads(l) for l in open(os.path.join(out, name)) if l.startswith("{")]
    rss = json.loads(open(os.path.join(out, name + ".rss")).read().strip().splitlines()[-1])["time_rss_mb"] / 1024
    epochs = [r for r in rows if "epoch" in r]
    secs = [r["seconds"] for r in epochs] or [float("nan")]
    steady = statistics.median(secs[1:]) if len(secs) > 1 else secs[0]
    dl = [r["dataloader_epoch_s"] for r in rows if "dataloader_epoch_s" in r]
    torch = next((r["torch"] for r in rows if "torch" in r), None)
    acc = epochs[-1]["accuracy"] if epochs else float("nan")
    return dict(first=secs[0], steady=steady, acc=acc, n=len(secs), rss=rss, dl=dl, torch=torch)

print("bench/train: Fashion-MNIST, batch 128, SGD lr 0.1 (CPU measured; %s; PyTorch %s)" % (version.strip(), load("torch_mlp_" + threads[0])["torch"]))
print("%-4s %-8s %-24s %10s %10s %8s %9s %10s" % ("", "threads", "implementation", "s/epoch", "1st epoch", "ratio", "accuracy", "peak RSS"))
for model in ("mlp", "cnn"):
    for t in threads:
        L = load("lumen_%s_%s" % (model, t))
        rows = [("Lumen", L), ("PyTorch (DataLoader)", load("torch_%s_%s" % (model, t)))]
        if int(t) > 1:
            rows.append(("PyTorch (BLAS 1 thread)", load("torchb1_%s_%s" % (model, t))))
        if model == "mlp":
            rows.append(("PyTorch (index)", load("torchidx_%s_%s" % (model, t))))
        for name, r in rows:
            ratio = "" if name == "Lumen" else "%.2f" % (L["steady"] / r["steady"])
            print("%-4s %-8s %-24s %10.3f %10.3f %8s %8.2f%% %7.0f MB" % (model, t, name, r["steady"], r["first"], ratio,
                  100 * r["acc"], r["rss"]))
print("ratio = Lumen s/epoch / that row's s/epoch (targets: MLP <= 0.85, CNN <= 1.0). PyTorch (DataLoader): the")
print("standard torch.utils.data.DataLoader, OPENBLAS_NUM_THREADS = torch threads; (BLAS 1 thread): OpenBLAS on one")
print("thread beside torch's pool, PyTorch's fastest setting at 2 threads here; (index): batches as x[perm[i:i+128]].")
print("accuracy after the last epoch; peak RSS of the whole process (/usr/bin/time, max resident set)")
print()
print("%-8s %-22s %14s %14s %18s" % ("threads", "DataLoader epoch", "1st (cold) ms", "2nd ms", "% of MLP epoch"))
for t in threads:
    L, D, P = load("lumen_mlp_%s" % t), load("lumen_dl_%s" % t), load("torch_mlp_%s" % t)
    print("%-8s %-22s %14.1f %14.1f %17.1f%%" % (t, "Lumen", 1000 * D["dl"][0], 1000 * D["dl"][-1], 100 * D["dl"][-1] / L["steady"]))
    print("%-8s %-22s %14.1f %14s %17.1f%%" % (t, "PyTorch DataLoader", 1000 * P["dl"][0], "", 100 * P["dl"][0] / P["steady"]))
print("(an epoch of shuffled batches of 128 from the 60,000 training images, no training; target: Lumen under 5% of its MLP epoch)")
PY
