# One entry of a PTX module with the module's header and the shared/global declarations it names.
import sys,re
src, entry = sys.argv[1:3]
text=open(src).read(); lines=text.split('\n')
head=[l for l in lines[:40] if l.startswith(('.version','.target','.address_size'))]
out=[]; on=False
for l in lines:
    if re.match(r'^\s*(\.visible\s+|\.weak\s+)?\.entry\s+'+re.escape(entry)+r'\(', l): on=True
    if on: out.append(l)
    if on and l.startswith('}'): break
assert out, entry
body='\n'.join(out)
decls=[l for l in lines if re.match(r'^\s*(\.extern\s+|\.visible\s+)?\.(shared|global|const)\s',l) and re.search(r'\b([A-Za-z_$][\w$]*)\s*(\[|;)',l) and any(re.search(r'\b'+re.escape(nm)+r'\b',body) for nm in re.findall(r'([A-Za-z_$][\w$]*)\s*(?:\[|;)',l)[-1:])]
print('\n'.join(head)+'\n'); print('\n'.join(decls)+'\n'); print(body)
