#!/usr/bin/env python3
"""The README's performance table, from a depot-compare JSON file (its medians and ratios).

    python3 Benchmarks/scripts/readme-table.py Benchmarks/results/latest.json

Prints the Markdown table of the README's "Performance" section: ns per operation, the median of
the run's rounds (`workloads`), and ratios of those medians. Paste it over the
table when the README names a new run.
"""
import json
import sys


def ns(value):
    """98.19 -> 98.2, 1335.1 -> 1,335: a decimal below 100 ns, whole numbers above."""
    if value is None:
        return ""
    return f"{value:.1f}" if value < 100 else f"{round(value):,}"


def ratio(value):
    """Two decimals below 5 (1.026 -> 1.03), one above (10.464 -> 10.5)."""
    return f"{value:.2f}" if value < 5 else f"{value:.1f}"


def three_figures(value):
    """16676.3 -> 16,700."""
    digits = len(str(int(value)))
    return f"{round(value, -(digits - 3)):,.0f}"


def main(path):
    run = json.load(open(path))
    w = run["workloads"]

    def q(workload, numerator, denominator):
        return w[workload][numerator] / w[workload][denominator]

    rows = [
        ("append put, 1M × 100 B", ns(w["append_put"]["c"]), ns(w["append_put"]["lmdb"]), "",
         ns(w["append_put"]["grdb"]), f"binding/C {ratio(q('append_put', 'lmdb', 'c'))}"),
        ("random put, 1M", ns(w["random_put"]["c"]), ns(w["random_put"]["lmdb"]), "",
         ns(w["random_put"]["grdb"]), f"binding/C {ratio(q('random_put', 'lmdb', 'c'))}"),
        ("random get, 1M", ns(w["random_get"]["c"]), ns(w["random_get"]["lmdb"]), "",
         ns(w["random_get"]["grdb"]), f"binding/C {ratio(q('random_get', 'lmdb', 'c'))}"),
        ("full scan, per record", ns(w["scan"]["c"]), ns(w["scan"]["lmdb"]), "",
         ns(w["scan"]["grdb"]), f"binding/C {ratio(q('scan', 'lmdb', 'c'))}"),
        ("document insert, 100k in one txn", ns(w["doc_insert"]["c"]) + " (raw bytes)",
         ns(w["doc_insert"]["lmdb"]) + " (raw bytes)", ns(w["doc_insert"]["documents"]),
         ns(w["doc_insert"]["grdb"]),
         f"documents/C {ratio(q('doc_insert', 'documents', 'c'))}; GRDB/documents {ratio(q('doc_insert', 'grdb', 'documents'))}"),
        ("document get by ID, random order", ns(w["doc_get"]["c"]) + " (raw bytes)",
         ns(w["doc_get"]["lmdb"]) + " (raw bytes)", ns(w["doc_get"]["documents"]),
         ns(w["doc_get"]["grdb"]),
         f"documents/C {ratio(q('doc_get', 'documents', 'c'))}; GRDB/documents {ratio(q('doc_get', 'grdb', 'documents'))}"),
        ("one field by ID (`tx.field(\\.age, of:)`)", ns(w["doc_field"]["c"]) + " (raw get)", "",
         ns(w["doc_field"]["documents"]), "", f"documents/C {ratio(q('doc_field', 'documents', 'c'))}"),
        ("codec encode+decode, 5 fields", "", "", ns(w["codec"]["documents"]),
         "JSON " + ns(w["codec"]["json"]), f"JSON/binary {ratio(q('codec', 'json', 'documents'))}"),
        (f"equality query on {w['doc_get']['ops'] // 1000}k docs", "", "",
         ns(w["indexed_query"]["documents"]) + " (unique index)", "scan: " + ns(w["indexed_query"]["scan"]),
         f"index {three_figures(q('indexed_query', 'scan', 'documents'))}× faster"),
        (f"seed 100 × 1,000 employees ({w['seed_fixture']['ops']:,} docs, 501 files)", "", "",
         ns(w["seed_fixture"]["documents"]) + " per document", "", ""),
    ]
    print("| workload | C on liblmdb | DepotLMDB | Depot documents | GRDB | ratio |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("|" + "|".join(f" {cell} " if cell else " " for cell in row) + "|")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: readme-table.py DEPOT_COMPARE_JSON")
    main(sys.argv[1])
