"""The report: JSON (everything), markdown tables and PNG plots."""
import json
import math
import os

import numpy as np

TIMED = ("ok", "FAIL", "unchecked")
MAX_BAR_PLOTS = 8


def add_speedups(rows):
    """Recur's speedup over each row: the row's median ms/batch over Recur's on
    the same device (> 1: Recur is faster). Recur's is the default system's
    row (`recur-cpu`, `recur-cuda`: the compiler's default fusion level), or,
    in a run without it, the first Recur row of that device."""
    recur = {}
    for r in rows:
        if not r["system"].startswith("recur-") or r["status"] not in TIMED:
            continue
        if r["system"] == f"recur-{r['device']}" or r["device"] not in recur:
            recur[r["device"]] = r["ms"]["median"]
    for row in rows:
        if row["status"] in TIMED and row["device"] in recur:
            row["recur_speedup"] = round(row["ms"]["median"] / recur[row["device"]], 3)


def collect_versions(entries):
    versions = {"numpy": np.__version__}
    try:
        import matplotlib
        versions["matplotlib"] = matplotlib.__version__
    except ImportError:
        pass
    for entry in entries:
        for row in entry["results"]:
            for key, value in row.get("versions", {}).items():
                seen = versions.setdefault(key, str(value))
                if str(value) not in seen.split(" | "):
                    versions[key] = f"{seen} | {value}"
    return versions


def row_summary(row):
    if row["status"] not in TIMED:
        return f"{row['system']}: {row['status']}: {row.get('reason', '')}"
    text = f"{row['system']}: {row['ms']['median']:.3f} ms/batch"
    if "check" in row:
        c = row["check"]
        text += (f", check {'pass' if c['pass'] else 'FAIL'} (max abs error "
                 f"{c['max_abs_error']:.2g}, max rel {c['max_rel_error']:.2g})")
    if row["status"] != "ok":
        text += f" [{row['status']}: {row.get('reason', '')}]"
    return text


def print_listing(systems, workloads):
    print("systems:")
    for s in systems:
        print(f"  {s.name:<22} {s.device:<5} {s.what}")
    if workloads:
        print("workloads:")
        for w in workloads:
            print(f"  {w.name:<28} [{', '.join(w.devices)}] {w.describe()}")


def _number(value, digits=3):
    if value is None:
        return "—"
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.{digits}g}"


def _table(entry, fma_peak=None):
    """`fma_peak`: the CPU's fp32 FMA GFLOP/s, for the CPU rows' share of it."""
    lines = ["| system | device | check | ms/batch median | min | max | sequences/s | "
             "GFLOP/s | of FMA peak | "
             "Recur speedup | compile/JIT s | peak RSS MiB | max abs error | max rel error |",
             "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    notes = []
    skipped = {}
    for row in entry["results"]:
        name = row["system"] + (" ⚠" if row.get("warnings") else "")
        if row["status"] not in TIMED:
            skipped.setdefault((row["status"], row["reason"]), []).append(row["system"])
            continue
        c = row.get("check", {})
        status = {"ok": "pass", "FAIL": "**FAIL**", "unchecked": "unchecked"}[row["status"]]
        speedup = row.get("recur_speedup")
        peak = _number(row.get("peak_rss_mib"))
        if row.get("peak_device_mib") is not None:
            peak += f" (GPU {_number(row['peak_device_mib'])})"
        gflops = entry["gflop_per_batch"] / (row["ms"]["median"] / 1000) \
            if row["ms"]["median"] else None
        share = f"{100 * gflops / fma_peak:.0f}%" \
            if gflops and fma_peak and row["device"] == "cpu" else "—"
        lines.append(
            f"| {name} | {row['device']} | {status} | {_number(row['ms']['median'], 4)} | "
            f"{_number(row['ms']['min'], 4)} | {_number(row['ms']['max'], 4)} | "
            f"{_number(row['sequences_per_second'])} | {_number(gflops)} | {share} | "
            f"{'—' if speedup is None else f'{speedup:.2f}×'} | {_number(row.get('compile_s'))} | "
            f"{peak} | {_number(c.get('max_abs_error'), 2)} | {_number(c.get('max_rel_error'), 2)} |")
        for text in ([f"{row['status']}: {row['reason']}"] if row.get("reason") else []) + \
                row.get("warnings", []) + row.get("notes", []):
            notes.append(f"**{row['system']}**: {text}")
    for (status, reason), names in skipped.items():
        notes.append(f"{', '.join(f'**{n}**' for n in names)}: {status}: {reason}")
    return lines, notes


def markdown(result, plots):
    m = result["machine"]
    gpus = ", ".join(m["gpus"]) or "no CUDA device"
    pipelines = sorted({f"{r['device']}: `{r['pipeline']}`" for e in result["workloads"]
                        for r in e["results"] if r.get("pipeline")})
    versions = ", ".join(f"{k} {v}" for k, v in sorted(result["versions"].items()))
    precisions = sorted({e["precision"] for e in result["workloads"]})
    out = [f"# Benchmark: {result['name']}", ""]
    if result["quick"]:
        out += ["**Quick run** (at most 1 warm-up and 3 timed batches): not for comparison.", ""]
    out += [
        f"- machine: `{m['slug']}`: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB; {gpus}",
        *([f"- fp32 FMA peak ({m['fp32_peak']['isa']}, {result['threads']} threads): "
           f"{m['fp32_peak']['gflops']} GFLOP/s, measured by {m['fp32_peak']['method']}; "
           "GFLOP/s counts a batch's GEMM multiply-adds × 2"]
          if m.get("fp32_peak") and m["fp32_peak"].get("gflops") else []),
        f"- precision: {', '.join(precisions)}"
        + (" (TF32 off everywhere)" if precisions == ["fp32"] else ""),
        f"- Recur: commit {result['recur']['commit']}, {result['recur']['llvm'] or 'LLVM ?'}; "
        f"pipeline {'; '.join(pipelines) or '—'}",
        f"- versions: {versions}",
        f"- CPU threads: {result['threads']}; {result['created']}; `{result['command']}`",
        "- check: every output element within |got − want| ≤ tol·(1 + |want|) of the "
        "reference; max rel error over |want| ≥ 1e-3. Recur speedup: a row's median "
        "ms/batch ÷ Recur's on the same device.",
        ""]
    for entry in result["workloads"]:
        timed = [r for r in entry["results"] if r["status"] in TIMED]
        title = f"## {entry['name']}"
        model = ", ".join(f"{k} {v}" for k, v in entry["model"].items() if k != "kind")
        lengths = entry.get("lengths")
        packed = (f", lengths U[{lengths['min']}, {entry['seq']}] ({lengths['fraction']:.1%} of "
                  f"the tokens)" if lengths else "")
        describe = (f"{entry['model']['kind']} ({model}), T={entry['seq']}, B={entry['batch']}"
                    f"{packed}, {entry['precision']}, {entry['mode']}, {entry['warmup']} warm-up + "
                    f"{entry['iters']} timed batches, {entry['gflop_per_batch']:.3g} GFLOP/batch")
        if not timed:
            reasons = sorted({f"{r['status']}: {r['reason']}" for r in entry["results"]})
            out += [title, "", describe + ". Not run: " + "; ".join(reasons) + ".", ""]
            continue
        reference = entry.get("reference", {})
        # The fp32 FMA peak is no bound at other precisions (bf16 dot
        # products do two multiply-adds per lane).
        lines, notes = _table(entry, (m.get("fp32_peak") or {}).get("gflops")
                              if entry["precision"] == "fp32" else None)
        out += [title, "", describe + ".", "",
                f"Reference: {reference.get('what') or reference.get('error')}"
                + (f" ({reference['seconds']} s)" if "seconds" in reference else "") + ".", ""]
        out += lines + [""] + [f"- {n}" for n in notes] + ([""] if notes else [])
        if entry["name"] in plots:
            out += [f"![{entry['name']}]({plots[entry['name']]})", ""]
    if "summary" in plots:
        out += [f"![summary]({plots['summary']})", ""]
    if result.get("plots_error"):
        out += [f"Plots: {result['plots_error']}", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _plot_workload(plt, entry, title, path):
    rows = [r for r in entry["results"] if r["status"] in TIMED]
    rows.sort(key=lambda r: r["ms"]["median"])
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(rows) + 1.6))
    medians = [r["ms"]["median"] for r in rows]
    errors = [[r["ms"]["median"] - r["ms"]["min"] for r in rows],
              [r["ms"]["max"] - r["ms"]["median"] for r in rows]]
    colors = ["tab:green" if r["status"] == "ok" else "tab:red" for r in rows]
    labels = [f"{r['system']}" + ("" if r["status"] == "ok" else f" ({r['status']})") for r in rows]
    ax.barh(range(len(rows)), medians, xerr=errors, color=colors, capsize=3)
    ax.set_yticks(range(len(rows)), labels)
    ax.invert_yaxis()
    if max(medians) / min(medians) > 30:
        ax.set_xscale("log")
    for i, row in enumerate(rows):
        ax.text(row["ms"]["max"], i, f"  {row['ms']['median']:.3g}", va="center", fontsize=8)
    ax.set_xlabel("ms per batch (median; whiskers: min–max)")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_summary(plt, entries, title, path):
    names = [e["name"] for e in entries]
    systems = []
    for e in entries:
        systems += [r["system"] for r in e["results"]
                    if r["status"] in TIMED and r["system"] not in systems]
    fig, ax = plt.subplots(figsize=(max(8, 0.35 * len(names) + 3), 5))
    for system in systems:
        values = []
        for e in entries:
            row = next((r for r in e["results"] if r["system"] == system), None)
            values.append(row["sequences_per_second"] if row and row["status"] in TIMED
                          else math.nan)
        ax.plot(range(len(names)), values, marker="o", label=system)
    ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("sequences per second")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot(result, out, name):
    """PNG files; returns {workload name or 'summary': file name}."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    m = result["machine"]
    where = m["gpus"][0] if m["gpus"] else f"{m['cpu']}, {m['cores']} cores"
    entries = [e for e in result["workloads"] if any(r["status"] in TIMED for r in e["results"])]
    plots = {}
    if len(entries) <= MAX_BAR_PLOTS:
        for entry in entries:
            file = f"{name}.png" if len(result["workloads"]) == 1 else f"{name}-{entry['name']}.png"
            _plot_workload(plt, entry, f"{entry['name']} ({entry['precision']}) — {where}",
                           os.path.join(out, file))
            plots[entry["name"]] = file
    if len(entries) > 1:
        file = f"{name}-summary.png"
        _plot_summary(plt, entries, f"{name} — {where}", os.path.join(out, file))
        plots["summary"] = file
    return plots


def write(result, out, name):
    """Writes <name>.json, <name>.md and the plots under `out`; returns the
    paths written."""
    os.makedirs(out, exist_ok=True)
    try:
        plots = plot(result, out, name)
    except ImportError:
        plots = {}
        result["plots_error"] = "not drawn: matplotlib is not installed (python3-matplotlib)"
    result["plots"] = plots
    paths = [os.path.join(out, f"{name}.json"), os.path.join(out, f"{name}.md")]
    with open(paths[0], "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    with open(paths[1], "w") as f:
        f.write(markdown(result, plots))
    return paths + [os.path.join(out, p) for p in plots.values()]
