#!/usr/bin/env python3
"""Bar chart of the ratios in a depot-compare JSON file.

    python3 Benchmarks/scripts/chart.py Benchmarks/results/latest.json Benchmarks/results/latest.png

Left panel: the binding and the document layer against C on liblmdb (lmdb/c, documents/c), with
the targets drawn as ticks (lower is better; 1.0 = as fast as C). Right panel: GRDB against the
document layer (grdb/documents) and against the binding (grdb/lmdb), on a log scale (higher means
Depot is faster). Ratios that are n/a (not measured yet) are left out.

Uses matplotlib when it is installed (`pip install matplotlib`); otherwise it writes a plain PNG
with a small built-in writer (bars and reference lines, no text) and says so.
"""
import json
import math
import struct
import sys
import zlib

# The targets for lmdb/c.
TARGETS = {"random_get": 1.10, "random_put": 1.10, "append_put": 1.15, "scan": 1.30}
LEFT = [("lmdb/c", "#4C72B0"), ("documents/c", "#55A868")]
RIGHT = [("grdb/documents", "#C44E52"), ("grdb/lmdb", "#DD8452")]


def load(path):
    with open(path) as f:
        data = json.load(f)
    ratios = data.get("ratios", {})
    workloads = list(data.get("workloads", {}).keys())
    order = ["append_put", "random_put", "random_get", "scan", "durable_single_write",
             "doc_insert", "doc_get", "doc_field", "codec"]
    workloads.sort(key=lambda w: order.index(w) if w in order else len(order))
    return data, workloads, ratios


def series(workloads, ratios, keys):
    """Workloads that have at least one of `keys`, and the values (None when n/a)."""
    names, values = [], {k: [] for k, _ in keys}
    for w in workloads:
        row = ratios.get(w, {})
        if not any(isinstance(row.get(k), (int, float)) for k, _ in keys):
            continue
        names.append(w)
        for k, _ in keys:
            v = row.get(k)
            values[k].append(v if isinstance(v, (int, float)) else None)
    return names, values


def with_matplotlib(data, workloads, ratios, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(14, 5.5), gridspec_kw={"width_ratios": [3, 2]})
    for ax, keys, log, title in [
        (axes[0], LEFT, False, "Depot vs C on liblmdb (median ns/op ratio, lower is better)"),
        (axes[1], RIGHT, True, "GRDB/SQLite vs Depot (ratio, higher = Depot faster)"),
    ]:
        names, values = series(workloads, ratios, keys)
        if not names:
            ax.set_title(title + "\n(no data yet)")
            ax.axis("off")
            continue
        width = 0.8 / len(keys)
        for i, (k, color) in enumerate(keys):
            xs = [j + (i - (len(keys) - 1) / 2) * width for j in range(len(names))]
            ys = [v if v is not None else 0 for v in values[k]]
            bars = ax.bar(xs, ys, width, label=k, color=color)
            for b, v in zip(bars, values[k]):
                label = f"{v:.2f}" if v is not None else "n/a"
                y = v if v is not None else (1 if log else 0)
                ax.annotate(label, (b.get_x() + b.get_width() / 2, y), ha="center", va="bottom", fontsize=7,
                            xytext=(0, 2), textcoords="offset points")
        ax.axhline(1.0, color="black", linewidth=0.8)
        if not log:
            for j, w in enumerate(names):
                if w in TARGETS:
                    ax.plot([j - 0.45, j + 0.45], [TARGETS[w]] * 2, color="red", linestyle="--", linewidth=1)
            ax.plot([], [], color="red", linestyle="--", linewidth=1, label="target (lmdb/c)")
        else:
            ax.set_yscale("log")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
    m = data.get("machine", {})
    fig.suptitle(f"depot-compare {'--quick ' if data.get('quick') else ''}{data.get('date', '')} - "
                 f"{m.get('cores', '?')} cores, {m.get('memoryGiB', '?')} GiB, {m.get('lmdb', '')}", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


# --- Fallback: a tiny PNG writer (no text) ------------------------------------------------------

def write_png(path, width, height, pixels):
    raw = b"".join(b"\x00" + bytes(pixels[y * width * 3:(y + 1) * width * 3]) for y in range(height))

    def chunk(tag, body):
        c = struct.pack(">I", len(body)) + tag + body
        return c + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
        f.write(chunk(b"IEND", b""))


def without_matplotlib(data, workloads, ratios, out):
    width, height = 1000, 420
    px = bytearray([255] * width * height * 3)

    def rect(x0, y0, x1, y1, rgb):
        for y in range(max(0, int(y0)), min(height, int(y1))):
            for x in range(max(0, int(x0)), min(width, int(x1))):
                i = (y * width + x) * 3
                px[i:i + 3] = bytes(rgb)

    def hexrgb(h):
        return [int(h[i:i + 2], 16) for i in (1, 3, 5)]

    # Left half: LEFT ratios on a linear scale 0..3; right half: RIGHT ratios on log scale 0.1..100.
    for (keys, x0, x1, to_y) in [
        (LEFT, 20, 560, lambda v: height - 20 - min(v, 3.0) / 3.0 * (height - 40)),
        (RIGHT, 600, 980, lambda v: height - 20 - (math.log10(max(min(v, 100), 0.1)) + 1) / 3 * (height - 40)),
    ]:
        names, values = series(workloads, ratios, keys)
        if not names:
            continue
        slot = (x1 - x0) / len(names)
        bw = slot * 0.8 / len(keys)
        for j in range(len(names)):
            for i, (k, color) in enumerate(keys):
                v = values[k][j]
                if v is None:
                    continue
                bx = x0 + j * slot + slot * 0.1 + i * bw
                rect(bx, to_y(v), bx + bw - 1, height - 20, hexrgb(color))
        rect(x0, to_y(1.0), x1, to_y(1.0) + 1, [0, 0, 0])
    write_png(out, width, height, px)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: chart.py RESULTS.json OUT.png")
    data, workloads, ratios = load(sys.argv[1])
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        without_matplotlib(data, workloads, ratios, sys.argv[2])
        print(f"wrote {sys.argv[2]} (plain bars: matplotlib is not installed; `pip install matplotlib` for labels)")
        return
    with_matplotlib(data, workloads, ratios, sys.argv[2])
    print(f"wrote {sys.argv[2]}")


if __name__ == "__main__":
    main()
