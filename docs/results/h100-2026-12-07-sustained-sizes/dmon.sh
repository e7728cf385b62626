#!/usr/bin/env bash
# lab gemm (table: rows and rounds) with nvidia-smi sampling clocks, power and throttle reasons every 100 ms.
set -u
here=$(cd "$(dirname "$0")" && pwd)
log=$OUT/gemm-log.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active,clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_slowdown,clocks_event_reasons.sw_thermal_slowdown --format=csv -lms 100 > $OUT/smi.csv 2>&1 &
smi=$!
{ date -u; timeout 250 $here/lab gemm; echo rc=$?; date -u; } > $log 2>&1
kill $smi
