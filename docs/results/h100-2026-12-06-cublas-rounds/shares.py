"""Each kernel's share of cuBLAS at 4096 and 8192 in this folder's records:
row against row (cublas_share, or the rows' GFLOP/s where a record predates
the rounds) and in rounds (cublas_share_rounds, with its range), one column
a process. Run in this folder: python3 shares.py > shares.txt"""
import json

RECORDS = [
    ("c2f44da-1", "c2f44da/results-c2f44da-1/gemm.jsonl"),
    ("580b43d-1", "c2f44da/results-580b43d-1/gemm.jsonl"),
    ("580b43d-2", "c2f44da/results-580b43d-2/gemm.jsonl"),
    ("c2f44da-2", "c2f44da/results-c2f44da-2/gemm.jsonl"),
    ("83443ea-1", "83443ea/results-1/gemm.jsonl"),
    ("83443ea-2", "83443ea/results-2/gemm.jsonl"),
]


def rows(path):
    return {r["symbol"]: r for r in map(json.loads, open(path)) if isinstance(r.get("symbol"), str)}


def pct(x):
    return "-" if x is None else f"{100 * x:.1f}"


print("How each record read the share (c2f44da: rounds only, the kernel's row its rounds;")
print("580b43d: rows only; 83443ea: both, the rows timed alone, the rounds after them).")
print("Cells: row against row % / rounds median % [rounds' range].")
print()
data = {tag: rows(path) for tag, path in RECORDS}
symbols = [s for s in data["83443ea-1"] if "cublas_share" in data["83443ea-1"][s]]
for size in ("4096", "8192"):
    print(f"== {size}")
    print(f"{'row':30}" + "".join(f"{tag:>28}" for tag, _ in RECORDS))
    for s in (s for s in symbols if s.endswith("/" + size)):
        cells = []
        for tag, _ in RECORDS:
            r = data[tag].get(s, {})
            if tag.startswith("c2f44da"):
                lo, hi = r["cublas_share_range"]
                cell = f"- / {pct(r['cublas_share'])} [{pct(lo)}, {pct(hi)}]"
            elif "cublas_share_rounds" in r:
                lo, hi = r["cublas_share_rounds_range"]
                cell = f"{pct(r['cublas_share'])} / {pct(r['cublas_share_rounds'])} [{pct(lo)}, {pct(hi)}]"
            else:
                cell = f"{pct(r.get('cublas_share'))} / -"
            cells.append(f"{cell:>28}")
        print(f"{s:30}" + "".join(cells))
    print()

print("How far each reading moved across the four processes that took it:")
print("rounds: c2f44da-1, c2f44da-2 (its rounds) and 83443ea-1, -2 (cublas_share_rounds);")
print("row against row: 580b43d-1, -2 and 83443ea-1, -2 (cublas_share). Lowest to highest %, (points).")
for s in symbols:
    rounds = [data[t][s]["cublas_share"] for t in ("c2f44da-1", "c2f44da-2")]
    rounds += [data[t][s]["cublas_share_rounds"] for t in ("83443ea-1", "83443ea-2")]
    by_rows = [data[t][s]["cublas_share"] for t in ("580b43d-1", "580b43d-2", "83443ea-1", "83443ea-2")]
    spread = lambda v: f"{pct(min(v))} to {pct(max(v))} ({100 * (max(v) - min(v)):.1f})"
    print(f"{s:30} rounds {spread(rounds):24} row against row {spread(by_rows)}")
