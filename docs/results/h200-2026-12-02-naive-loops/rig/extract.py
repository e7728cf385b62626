import sys,re
src, entry, version, target = sys.argv[1:5]
lines = open(src).read().split('\n')
out=[]; on=False
for l in lines:
    if re.match(r'^\s*(\.visible\s+|\.weak\s+)?\.entry\s+'+re.escape(entry)+r'\(', l): on=True
    if on: out.append(l)
    if on and l.startswith('}'): break
assert out, entry
print(f".version {version}\n.target {target}\n.address_size 64\n")
print('\n'.join(out))
