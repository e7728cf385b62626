#!/usr/bin/env bash
# Runs steps ("name|timeout_s|command", one a line, from $1) in order under a
# deadline of $2 seconds, logging each to $OUT/<tag>/<name>.txt; packs one tarball.
set -u
B=$(cd "$(dirname "$0")" && pwd); export B
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
tag=$3; O=$OUT/$tag; mkdir -p $O; export O
deadline=$2; t0=$(date +%s)
exec > >(tee $O/log.txt) 2>&1
echo "== $(date -u +%FT%TZ) start ($tag)"; nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
while IFS='|' read -r name limit cmd; do
  [ -z "$name" ] && continue
  left=$(( deadline - ($(date +%s) - t0) ))
  if [ "$left" -lt 15 ]; then echo "$name: SKIPPED (deadline)"; continue; fi
  [ "$limit" -gt "$left" ] && limit=$left
  s=$(date +%s)
  timeout "$limit" bash -c "$cmd" > "$O/$name.txt" 2>&1; rc=$?
  echo "$name: rc=$rc $(( $(date +%s) - s )) s $(grep -E '^test result' "$O/$name.txt" | tail -1)"
done < "$1"
echo "== $(date -u +%FT%TZ) end, $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf $tag.tgz $tag && rm -rf $tag
