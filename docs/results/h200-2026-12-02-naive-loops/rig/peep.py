import re,sys
def fold(s):
    # "@%p bra EXIT; bra.uni HEAD; EXIT:" -> "@!%p bra HEAD; EXIT:"
    pat=re.compile(r'\t@(%p\d+) bra \t(\$L__BB\d+_\d+);\n\tbra\.uni \t(\$L__BB\d+_\d+);\n\2:')
    return pat.subn(lambda m: f'\t@!{m.group(1)} bra \t{m.group(3)};\n{m.group(2)}:', s)
if __name__=='__main__':
    s,n=fold(open(sys.argv[1]).read()); open(sys.argv[2],'w').write(s); print(sys.argv[2], n, 'folded')
