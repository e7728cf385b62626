#!/usr/bin/env bash
# Verification of issue 13's changes on the GPU (not part of the repository).
set -u
B=$(cd "$(dirname "$0")" && pwd)
O=$OUT/v; mkdir -p $O
exec > >(tee $O/log.txt) 2>&1
echo "== $(date -u +%FT%TZ) start"
nvidia-smi --query-gpu=name,pci.bus_id,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv
t0=$(date +%s)
echo "== roofline full, recorded"
$B/lab roofline --record --results $O/results > $O/roofline.txt 2>&1; echo "roofline rc=$? $(( $(date +%s)-t0 )) s"
cat $O/roofline.txt | head -60
echo "== quick runs"
for l in roofline harness unroll fuse fusion conv2d softmax specialize vectorize bandwidth; do
  s=$(date +%s); $B/lab $l --quick > $O/quick-$l.txt 2>&1; echo "quick $l rc=$? $(( $(date +%s)-s )) s"; done
echo "== gpu tests"
for t in $B/gpu_*; do s=$(date +%s); timeout 300 $t > $O/$(basename $t).txt 2>&1; rc=$?; echo "$(basename $t) rc=$rc $(grep -E '^test result' $O/$(basename $t).txt) $(( $(date +%s)-s )) s"; grep -E "FAILED|failed|panicked" $O/$(basename $t).txt | head -5; done
echo "== guards on: the planted write"
$B/lab roofline --plant-write-past-end; echo "rc=$?"
echo "== NVRTC 13 alone"
mkdir -p /tmp/n13 && ln -sf "$(readlink -f /usr/local/cuda/lib64/libnvrtc.so.13)" /tmp/n13/libnvrtc.so.13
LD_LIBRARY_PATH=/tmp/n13 $B/lab roofline --asm copy_coalesced --arch sm_90 | head -2; echo "asm rc=${PIPESTATUS[0]}"
echo "== sanitize planted + roofline + softmax ($(( $(date +%s)-t0 )) s so far)"
s=$(date +%s); bash $B/sanitize.sh $B/lab roofline softmax > $O/sanitize.txt 2>&1; echo "sanitize rc=$? $(( $(date +%s)-s )) s"; cat $O/sanitize.txt | grep -v "^=========" | head -20
echo "== $(date -u +%FT%TZ) end, $(( $(date +%s)-t0 )) s"
cd $OUT && tar czf v.tgz v && rm -rf v
