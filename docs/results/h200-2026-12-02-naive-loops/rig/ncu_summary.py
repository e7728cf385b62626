"""Prints the Nsight Compute figures the README reads, from the raw CSVs:
python3 ncu_summary.py > ncu-summary.txt (run in this folder)."""
import csv, io, lzma
def table(name):
    rows = list(csv.reader(io.StringIO(lzma.open(name, 'rt').read())))
    hi = [i for i, r in enumerate(rows) if r and r[0] == 'ID'][0]
    return rows[hi], rows[hi + 1], rows[hi + 2:]
keys = ['gpu__time_duration.sum', 'sm__cycles_elapsed.max', 'l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed',
        'l1tex__t_sector_hit_rate.pct', 'smsp__issue_active.avg.pct_of_peak_sustained_active',
        'smsp__pcsamp_warps_issue_stalled_lg_throttle', 'smsp__pcsamp_warps_issue_stalled_long_scoreboard']
for name, what, pick in [('ncu-cold-mm.csv.xz', 'default cache control (flush before each pass); launches r, c, r4, c8', [0, 1, 2, 3]),
                         ('ncu-warm-mm.csv.xz', '--cache-control none; launches 3, 7, 11, 15 = r, c, r4, c8', [3, 7, 11, 15])]:
    h, units, data = table(name)
    print(f'== {name}: {what}')
    for k in keys:
        i = h.index(k)
        print(f'{k} ({units[i]}):', ' '.join(data[j][i] for j in pick))
