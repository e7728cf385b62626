#!/bin/bash
# pat.sh PTXFILE ENTRY [version target]: ptxas sm_90 SASS pattern of loads and FMAs
P=/work/main/target/tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas; D=/work/main/target/tools/sass/nvidia/cu13/bin/cuobjdump
f=/tmp/rig/ptx/$2.ptx
python3 /tmp/rig/extract.py $1 $2 ${3:-6.5} ${4:-sm_75} > $f
$P -arch=sm_90 -v $f -o /tmp/rig/$2.cubin 2>&1 | grep -o "Used [0-9]* registers" | tr '\n' ' '
$D -sass /tmp/rig/$2.cubin 2>/dev/null | grep -E "^\s+/\*[0-9a-f]{4}\*/" | sed 's/;.*//' > /tmp/rig/$2.sass
echo "$2 $(wc -l < /tmp/rig/$2.sass) instrs"; awk '/LDG|FFMA/{print $2}' /tmp/rig/$2.sass | tr '\n' ' ' | sed 's/LDG.E.CONSTANT/L/g'; echo
