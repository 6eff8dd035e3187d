#!/usr/bin/env python3
"""The summary of a scripts/gpu_check.sh run: reads the folder of its step logs (status.tsv, the
gtest XML files, the benchmarks' JSON lines, machine.log) and writes summary.json and summary.txt
into --out.

  gpu_check_summary.py --logs DIR --out DIR
"""
import argparse
import json
import os
import re
import xml.etree.ElementTree as ElementTree


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def json_lines(text):
    """Every line of text that parses as a JSON object."""
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                found.append(json.loads(line))
            except ValueError:
                pass
    return found


def steps_of(logs):
    steps = {}
    for line in read(os.path.join(logs, "status.tsv")).splitlines():
        name, status, seconds = (line.split("\t") + ["", ""])[:3]
        steps[name] = {"status": status, "seconds": int(seconds or 0)}
    return steps


def gtest_counts(path):
    """passed / failed / skipped of a gtest XML report; None where there is none."""
    if not os.path.exists(path):
        return None
    try:
        root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError:
        return None
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for case in root.iter("testcase"):
        if case.find("failure") is not None:
            counts["failed"] += 1
        elif case.get("result") == "skipped" or case.find("skipped") is not None:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    return counts


def suites_of(logs, steps):
    suites = {}
    for name, step in steps.items():
        if name in ("build", "checkpoints") or name.startswith(("bench_", "transformers_", "speech_")):
            continue
        suite = {"status": step["status"], "seconds": step["seconds"]}
        counts = gtest_counts(os.path.join(logs, name + ".xml"))
        if counts is not None:
            suite.update(counts)
        if name == "memcheck":
            match = re.search(r"ERROR SUMMARY: (\d+) error", read(os.path.join(logs, "memcheck.log")))
            suite["errors"] = int(match.group(1)) if match else None
        suite["passed_all"] = step["status"] == "0" and suite.get("failed", 0) == 0 and suite.get("errors", 0) == 0
        suites[name] = suite
    return suites


def ratio(a, b):
    return round(a / b, 3) if a and b else None


def text_bench(logs, name, step):
    izwi = json_lines(read(os.path.join(logs, "bench_" + name + ".log")))
    report = izwi[-1] if izwi else {}
    baseline = json_lines(read(os.path.join(logs, "transformers_" + name + ".log")))
    hf_levels = {line["concurrency"]: line for line in baseline if "concurrency" in line}
    hf_prefill = next((line for line in baseline if "prefill_len" in line), None)
    bench = {"status": step.get("status"), "seconds": step.get("seconds")}
    if not report:
        return bench
    roofline = report["bandwidth_gbps"] * 1e9 / report["weight_bytes"] if report.get("weight_bytes") else None
    bench.update({"bandwidth_gbps": report.get("bandwidth_gbps"), "weight_bytes": report.get("weight_bytes"),
                  "roofline_tokens_per_s": roofline, "matmul_peak_gflops": report.get("fma_peak_gflops"),
                  "transformers": baseline[0] if baseline else None, "levels": [], "op_split": report.get("op_split")})
    for level in report.get("results", []):
        c = level["concurrency"]
        hf = hf_levels.get(c, {})
        bench["levels"].append({
            "concurrency": c, "tokens_per_s": level["tokens_per_s"],
            "wall_tokens_per_s": level["wall_tokens_per_s"], "ttft_p50_ms": level["ttft_p50_ms"],
            "roofline_fraction": ratio(level["tokens_per_s"], roofline) if c == 1 else None,
            "decode_step": level.get("decode_step"),
            "transformers_tokens_per_s": hf.get("tokens_per_s"),
            "transformers_wall_tokens_per_s": hf.get("wall_tokens_per_s"),
            "vs_transformers": ratio(level["tokens_per_s"], hf.get("tokens_per_s")),
            "vs_transformers_wall": ratio(level["wall_tokens_per_s"], hf.get("wall_tokens_per_s"))})
    if "prefill" in report:
        prefill = dict(report["prefill"])
        if hf_prefill:
            prefill["transformers_ttft_ms"] = hf_prefill["ttft_ms"]
            prefill["transformers_over_izwi"] = ratio(hf_prefill["ttft_ms"], prefill["ttft_ms"])
        bench["prefill"] = prefill
    if "shared_prefix" in report:
        bench["shared_prefix"] = report["shared_prefix"]
    return bench


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--logs", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    steps = steps_of(args.logs)
    machine = read(os.path.join(args.logs, "machine.log")).splitlines()
    commit = next((line.split()[1] for line in machine if line.startswith("commit ")), "unknown")
    suites = suites_of(args.logs, steps)
    benches = {name[len("bench_"):]: text_bench(args.logs, name[len("bench_"):], step)
               for name, step in steps.items() if name.startswith("bench_")}
    speech = {}
    for name, step in steps.items():
        if name.startswith("speech_"):
            lines = json_lines(read(os.path.join(args.logs, name + ".log")))
            speech[name[len("speech_"):]] = {"status": step["status"], "report": lines[-1] if lines else None}
    build_ok = steps.get("build", {}).get("status") == "0"
    expected = {"cuda_tests", "memcheck", "text_parity", "engine_parity"}
    summary = {
        "commit": commit, "machine": machine[1:], "steps": steps, "build_ok": build_ok, "suites": suites,
        "text_benchmarks": benches, "speech_benchmarks": speech,
        "all_passed": build_ok and expected <= set(suites) and all(s["passed_all"] for s in suites.values()),
    }
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)

    text = [f"izwi GPU check, commit {commit}", *machine[1:3], "",
            f"build: {'ok' if build_ok else 'FAILED'} ({steps.get('build', {}).get('seconds', 0)} s)", "",
            f"{'suite':<16} {'exit':>7} {'passed':>7} {'failed':>7} {'skipped':>8} {'seconds':>8}"]
    for name, s in sorted(suites.items()):
        extra = f"  memcheck errors: {s['errors']}" if "errors" in s else ""
        text.append(f"{name:<16} {s['status']:>7} {s.get('passed', '-'):>7} {s.get('failed', '-'):>7} "
                    f"{s.get('skipped', '-'):>8} {s['seconds']:>8}{extra}")
    for name in sorted(expected - set(suites)):
        text.append(f"{name:<16} {'not run':>7}")
    text += ["", f"{'model':<14} {'conc':>5} {'tok/s':>10} {'wall tok/s':>11} {'of roofline':>12} "
             f"{'HF tok/s':>10} {'x HF':>7} {'x HF wall':>10}"]
    for name, b in benches.items():
        if not b.get("levels"):
            text.append(f"{name:<14} bench exit {b.get('status')}")
        for level in b.get("levels", []):
            cells = [level["roofline_fraction"], level["transformers_tokens_per_s"], level["vs_transformers"],
                     level["vs_transformers_wall"]]
            shown = ["-" if v is None else f"{v:g}" for v in cells]
            text.append(f"{name:<14} {level['concurrency']:>5} {level['tokens_per_s']:>10.1f} "
                        f"{level['wall_tokens_per_s']:>11.1f} {shown[0]:>12} {shown[1]:>10} {shown[2]:>7} "
                        f"{shown[3]:>10}")
        if b.get("prefill"):
            p = b["prefill"]
            text.append(f"{name:<14} prefill {p['prompt_tokens']} tokens: TTFT {p['ttft_ms']:.1f} ms"
                        + (f", transformers {p['transformers_ttft_ms']:.1f} ms" if "transformers_ttft_ms" in p
                           else ""))
        for split in b.get("op_split") or []:
            d = split["decode_step"]
            text.append(f"{name:<14} step split at {split['concurrency']} (graphs off, device waits): step "
                        f"{d['step_ms']:.2f} ms = linear {d['linear_ms']:.2f} + attention {d['attention_ms']:.2f} + "
                        f"other ops {d['other_ops_ms']:.2f} + rest of model {d['rest_of_model_ms']:.2f} + engine "
                        f"{d['engine_ms']:.2f}")
        if b.get("shared_prefix"):
            s = b["shared_prefix"]
            text.append(f"{name:<14} shared {s['prefix_tokens']}-token prefix: TTFT {s['first_ttft_ms']:.1f} ms, "
                        f"cached {s['second_ttft_ms']:.1f} ms")
    for name, s in speech.items():
        text.append(f"{name:<22} {s['status']}")
    text.append("")
    text.append("all checks passed" if summary["all_passed"] else "NOT all checks passed")
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
