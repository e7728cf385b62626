#!/bin/bash
# The twins' registers and spill stores, and cubins for load_distance.py, on the development
# machine (no GPU). usage: twinscan.sh LAB TAG [TOOLS]
#   LAB    a `lab` binary (`cargo xtask bundle`); its `--asm` compiles the twins with NVRTC
#   TAG    names the outputs: /tmp/ptxdump/TAG-sm_80-c.{ptx,cubin}, TAG-sm_90a-c.{ptx,cubin}
#   TOOLS  a folder holding bin/ptxas and lib/libnvrtc.so.* (default: the 12.9 ones that
#          `cargo xtask asm` installs under target/tools); for 13.0, PyPI's nvidia-cuda-nvrtc and
#          nvidia-cuda-nvcc 13.0.* installed with `pip install --target DIR`, TOOLS=DIR/nvidia/cu13
# A ptxas wrapper ahead on the PATH keeps each PTX file `lab --asm` hands to ptxas; the twins'
# PTX is the one NVVM wrote. Run from the repository's root.
set -eu
lab=$1 tag=$2 root=$PWD
if [ $# -ge 3 ]; then ptxas=$3/bin/ptxas nvrtc=$3/lib
else ptxas=$root/target/tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas nvrtc=$root/target/tools/cuda-nvrtc/nvidia/cuda_nvrtc/lib; fi
wrap=$(mktemp -d) keep=$(mktemp -d); mkdir -p /tmp/ptxdump
printf '#!/bin/bash\nfor a in "$@"; do case $a in *.ptx) cp "$a" %s/$(date +%%s%%N).ptx;; esac; done\nexec %s "$@"\n' "$keep" "$ptxas" > $wrap/ptxas
chmod +x $wrap/ptxas
for arch in sm_80 sm_90a; do
  k=gemm_bf16_mma; [ $arch = sm_90a ] && k=gemm_bf16_tma
  rm -f $keep/*
  PATH=$wrap:$root/target/tools/sass/nvidia/cu13/bin:$PATH LD_LIBRARY_PATH=$nvrtc $lab gemm --asm $k --arch $arch > /dev/null 2>&1
  out=/tmp/ptxdump/$tag-$arch-c; cp "$(grep -l NVVM $keep/*.ptx | head -1)" $out.ptx
  $ptxas -v -arch=$arch -o $out.cubin $out.ptx 2>&1 | python3 -c "
import re, sys
name = spill = None
for l in sys.stdin:
    m = re.search(r\"Compiling entry function '(\w+)'\", l)
    if m: name = m.group(1)
    m = re.search(r'(\d+) bytes spill stores', l)
    if m: spill = m.group(1)
    m = re.search(r'Used (\d+) registers', l)
    if m and name and re.match(r'gemm_(bf16|f16)', name): print('$tag $arch', name, 'regs', m.group(1), 'spill', spill)
"
done
rm -rf $wrap $keep
