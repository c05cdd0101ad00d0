#!/bin/sh
# tests/tools/gpu_epoch.sh GPU_EPOCH — tools/gpu-check/epoch.c on the CPU (what gpu-check.sh runs on
# a GPU): the MLP and the CNN learn (test accuracy after one epoch on a few thousand images well
# above chance: 10%), the same seed gives the same loss and accuracy, --device cuda without a GPU
# exits 2 saying why, bad options exit 1 with the usage.
set -u
bin=$1
data=/usr/share/datasets/fashion-mnist
fail() { echo "gpu_epoch: $*"; exit 1; }
if [ ! -r $data/train-images-idx3-ubyte.gz ]; then echo "skipped: no Fashion-MNIST in $data"; exit 0; fi
acc() { sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p'; }
mlp=$("$bin" --model mlp --device cpu --limit 6000 --threads 2) || fail "mlp failed: $mlp"
a=$(echo "$mlp" | acc)
awk -v a="$a" 'BEGIN { exit !(a > 60) }' || fail "mlp: accuracy $a% after 6000 images: $mlp"
again=$("$bin" --model mlp --device cpu --limit 6000 --threads 2 | grep epoch | sed 's/: [0-9.]* s, [0-9]* images\/s//')
first=$(echo "$mlp" | grep epoch | sed 's/: [0-9.]* s, [0-9]* images\/s//')
[ "$again" = "$first" ] || fail "the same seed gave '$first' and then '$again'"
cnn=$("$bin" --model cnn --device cpu --limit 2000 --threads 2) || fail "cnn failed: $cnn"
a=$(echo "$cnn" | acc)
awk -v a="$a" 'BEGIN { exit !(a > 35) }' || fail "cnn: accuracy $a% after 2000 images: $cnn"
out=$("$bin" --model mlp --device cuda --limit 500 2>&1); rc=$?
if [ $rc -eq 2 ]; then
	echo "$out" | grep -q '^gpu_epoch: no GPU: ' || fail "--device cuda without a GPU said: $out"
elif [ $rc -ne 0 ]; then
	fail "--device cuda: exit $rc: $out"
fi
out=$("$bin" --model rnn --device cpu 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q 'usage: gpu_epoch' || fail "a bad --model: exit $rc: $out"
out=$("$bin" --model mlp --device cpu --data /nonexistent 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q 'train-images-idx3-ubyte' || fail "a missing data set: exit $rc: $out"
echo "$mlp"
echo "$cnn"
echo "ok"
