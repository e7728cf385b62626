#!/usr/bin/env bash
# Unpacks the xz'd rig and PTX variants beside it with python's lzma (the device has no xz promise).
here=$(cd "$(dirname "$0")" && pwd)
for f in mmarig Vd.ptx Ve.ptx Vi.ptx Vp.ptx perm-0231.ptx perm-1320.ptx perm-0213.ptx R0.ptx T0.ptx R1.ptx T1.ptx R2.ptx T2.ptx R3.ptx T3.ptx; do
  [ -e $here/$f ] || python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" $here/$f.xz $here/$f
done
chmod +x $here/mmarig
