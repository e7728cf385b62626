#!/usr/bin/env bash
# ncu at its base clock: roofline's mma.sync chains (mma_peak) and the wide kernel (gemm_bf16_swizzled_wide) at every size.
set -u
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
export PATH=$PATH:/usr/local/cuda/bin
log=$OUT/ncu-log.txt
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.applications.graphics --format=csv; ncu --version | tail -1; } >> $log
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct,smsp__warp_issue_stalled_not_selected_per_warp_active.pct,smsp__warp_issue_stalled_selected_per_warp_active.pct,smsp__warp_issue_stalled_dispatch_stall_per_warp_active.pct,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size,launch__registers_per_thread
for what in roofline gemm; do
  s=$(date +%s)
  timeout 140 ncu --clock-control base --metrics $M -k 'regex:^(mma_peak|gemm_bf16_swizzled_wide)$' -f -o /tmp/$what ./lab $what --profile > /tmp/$what.out 2> /tmp/$what.err
  echo "ncu $what: rc=$? $(( $(date +%s) - s )) s" >> $log; tail -3 /tmp/$what.err >> $log
  ncu -i /tmp/$what.ncu-rep --csv --page raw --metrics $M > $OUT/ncu-$what.csv 2>> $log
  wc -l $OUT/ncu-$what.csv >> $log
done
date -u +%FT%TZ >> $log
