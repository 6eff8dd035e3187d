#!/usr/bin/env python3
"""The summary of a scripts/gpu_check.sh run: reads the folder of its step logs (status.tsv, the
gtest XML files, the benchmarks' JSON lines, machine.log) and writes summary.json and summary.txt
into --out, with every target of the GPU text-speed and speech-on-the-GPU issues (and the
quantized-weights issue's Hopper FP8 ratio) beside its measured value (TARGETS below): met, missed, or not measured and why (the step was skipped for
time, failed, or found no checkpoint).

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
        # A suite whose filter matched no test proves nothing (a renamed test suite): not passed.
        ran_none = counts is not None and sum(counts.values()) == 0
        suite["passed_all"] = (step["status"] == "0" and suite.get("failed", 0) == 0 and suite.get("errors", 0) == 0
                               and not ran_none)
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
                  "resident_weight_bytes": report.get("resident_weight_bytes"),
                  "gflop_per_token": report.get("gflop_per_token"),
                  "roofline_tokens_per_s": roofline, "matmul_peak_gflops": report.get("fma_peak_gflops"),
                  "transformers": baseline[0] if baseline else None, "levels": [], "op_split": report.get("op_split")})
    for level in report.get("results", []):
        c = level["concurrency"]
        hf = hf_levels.get(c, {})
        # tokens_per_s: while every request decodes (null where no such window exists);
        # decode_tokens_per_s: after the last prompt (izwi-bench's header comment; older logs lack it).
        bench["levels"].append({
            "concurrency": c, "tokens_per_s": level.get("tokens_per_s"),
            "decode_tokens_per_s": level.get("decode_tokens_per_s"),
            "decode_requests_mean": level.get("decode_requests_mean"),
            "wall_tokens_per_s": level["wall_tokens_per_s"], "ttft_p50_ms": level["ttft_p50_ms"],
            "roofline_fraction": ratio(level.get("tokens_per_s"), roofline) if c == 1 else None,
            "decode_step": level.get("decode_step"),
            "transformers_tokens_per_s": hf.get("tokens_per_s"),
            "transformers_wall_tokens_per_s": hf.get("wall_tokens_per_s"),
            "vs_transformers": ratio(level.get("tokens_per_s"), hf.get("tokens_per_s")),
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


def at_level(levels, concurrency, key="concurrency"):
    return next((level for level in levels or [] if level.get(key) == concurrency), None)


def most_streams(levels, key, keeps_up):
    """The largest count of streams (`key`) whose level kept up, and whether it was the largest
    tried (the count is then a lower bound); None without levels."""
    if not levels:
        return None, False
    kept = [level[key] for level in levels if keeps_up(level)]
    best = max(kept, default=0)
    return best, best == max(level[key] for level in levels)


def figure(value, note=""):
    return value, note


# Each target of the issues: issue, model, measure, the step whose log has the figure (or a tuple
# of steps, whose figures the function takes in that order), the function from the figures to
# (value, note), the comparison, the target and its unit.
# Text steps are given the summary's processed benchmark (text_bench), speech steps the bench's
# own JSON report.
def llama_prefill(bench):
    prefill = bench.get("prefill") or {}
    if prefill.get("prompt_tokens") != 4096:
        return figure(None)
    hf = prefill.get("transformers_ttft_ms")
    notes = []
    if "steps" in prefill:
        notes.append(f"{prefill['steps']} steps of up to {prefill['max_tokens_per_step']} tokens")
    if hf:
        notes.append(f"transformers (sdpa) {hf:.1f} ms in the same run")
    return figure(prefill["ttft_ms"], "; ".join(notes))


def llama_cached_prefix(bench):
    prefix = bench.get("shared_prefix") or {}
    if prefix.get("prefix_tokens") != 1024:
        return figure(None)
    return figure(prefix["second_ttft_ms"], f"cold {prefix['first_ttft_ms']:.1f} ms")


def llama_128(bench):
    level = at_level(bench.get("levels"), 128) or {}
    decode = level.get("decode_tokens_per_s")
    note = f"after the last prompt {decode:.0f} tokens/s; wall {level['wall_tokens_per_s']:.0f}" if decode else ""
    return figure(level.get("tokens_per_s"), note)


def llama_256(bench):
    level = at_level(bench.get("levels"), 256) or {}
    decode = level.get("decode_tokens_per_s")
    if decode is None:
        return figure(None)
    window = level.get("tokens_per_s")
    return figure(decode, f"decode tokens/s after the last prompt ({level['decode_requests_mean']:.0f} requests on "
                          f"average); wall {level['wall_tokens_per_s']:.0f} tokens/s; TTFT p50 "
                          f"{level['ttft_p50_ms']:.0f} ms; all requests decoding at once: "
                          + (f"{window:.0f} tokens/s" if window else "never"))


def roofline_at_1(bench):
    level = at_level(bench.get("levels"), 1) or {}
    return figure(level.get("roofline_fraction"))


def tts_one_stream(key):
    def value(report):
        level = at_level(report.get("results"), 1) or {}
        return figure(level.get(key))
    return value


def streams(levels_key, count_key, keeps_up, what):
    def value(report):
        best, bound = most_streams(report.get(levels_key), count_key, keeps_up)
        tried = ",".join(str(level[count_key]) for level in report.get(levels_key) or [])
        bound_note = "; the largest level tried kept up: a lower bound" if bound else ""
        return figure(best, f"{what}; levels tried {tried}{bound_note}")
    return value


def fp8_over_bf16_at_128(fp8, bf16):
    fp8_tps = (at_level(fp8.get("levels"), 128) or {}).get("tokens_per_s")
    bf16_tps = (at_level(bf16.get("levels"), 128) or {}).get("tokens_per_s")
    if not fp8_tps or not bf16_tps:
        return figure(None, "no 128-request decode figure in both benches")
    return figure(fp8_tps / bf16_tps, f"FP8 {fp8_tps:,.0f} vs bf16 {bf16_tps:,.0f} tokens/s")


def chat_first_audio(report):
    level = at_level(report.get("chat"), 1) or {}
    note = "" if report.get("codec", True) else "first frame: the random checkpoint has no codec"
    return figure(level.get("ttfa_p50_ms"), note)


TARGETS = [
    ("38", "llama-3.2-1b", "batch-1 decode, fraction of the read-bandwidth roofline", "bench_llama-3.2-1b",
     roofline_at_1, ">=", 0.6, ""),
    ("38", "qwen3-0.6b", "batch-1 decode, fraction of the roofline", "bench_qwen3-0.6b", roofline_at_1, ">=", 0.5,
     ""),
    ("38", "lfm2-1.2b", "batch-1 decode, fraction of the roofline", "bench_lfm2-1.2b", roofline_at_1, ">=", 0.5, ""),
    ("38", "llama-3.2-1b", "4,096-token prompt, TTFT", "bench_llama-3.2-1b-prefill", llama_prefill, "<=", 25, "ms"),
    ("38", "llama-3.2-1b", "1,024-token shared prefix, TTFT cached", "bench_llama-3.2-1b-prefill",
     llama_cached_prefix, "<=", 5, "ms"),
    ("38", "llama-3.2-1b", "128 requests, prompt 128 / 128 generated, decode tokens/s", "bench_llama-3.2-1b",
     llama_128, ">=", 40000, "tokens/s"),
    ("38", "llama-3.2-1b", "256 requests, prompt 512 / 256 generated", "bench_llama-3.2-1b-256", llama_256, "runs",
     None, "tokens/s"),
    ("39", "Qwen3-TTS 0.6B", "one stream: RTF", "speech_qwen3-tts-0.6b", tts_one_stream("rtf_p50"), "<=", 0.05, ""),
    ("39", "Qwen3-TTS 0.6B", "one stream: time to first audio", "speech_qwen3-tts-0.6b", tts_one_stream("ttfa_p50_ms"),
     "<=", 80, "ms"),
    ("39", "Qwen3-TTS 0.6B", "concurrent streams each faster than real time", "speech_qwen3-tts-0.6b",
     streams("results", "concurrency", lambda level: level["rtf_max"] < 1, "every stream's RTF < 1"), ">=", 64,
     "streams"),
    ("39", "Voxtral Realtime 4B", "live streams keeping up, p99 lag <= 400 ms", "speech_voxtral-realtime-4b",
     streams("results", "streams", lambda level: level["latency_p99_ms"] <= 400, "token latency p99 <= 400 ms"),
     ">=", 100, "streams"),
    ("39", "LFM2-Audio 1.5B", "chat: time to first audio, one stream", "speech_lfm2-audio-1.5b", chat_first_audio,
     "<=", 150, "ms"),
    ("39", "LFM2-Audio 1.5B", "chat: streams in real time", "speech_lfm2-audio-1.5b",
     streams("chat", "concurrency", lambda level: level["rtf_max"] < 1, "every stream's RTF < 1"), ">=", 32,
     "streams"),
    ("40", "llama-3.2-1b", "FP8 weights vs bf16, 128 requests, decode tokens/s", ("bench_llama-3.2-1b-fp8",
     "bench_llama-3.2-1b"), fp8_over_bf16_at_128, ">=", 1.6, "x"),
]


def why_missing(step):
    """Why a target's step gave no figure."""
    if step is None:
        return "not run"
    status = step["status"]
    if status == "skipped":
        return "skipped: no time left"
    if status == "124":
        return f"timed out after {step['seconds']} s"
    if status != "0":
        return f"step exit {status}" if status.isdigit() else f"not run: {status}"
    return "no figure in its log"


def targets_of(steps, benches, speech):
    rows = []
    for issue, model, measure, step_name, value_of, comparison, target, unit in TARGETS:
        names = step_name if isinstance(step_name, tuple) else (step_name,)
        figures = [benches.get(name[len("bench_"):]) if name.startswith("bench_")
                   else (speech.get(name[len("speech_"):]) or {}).get("report") for name in names]
        try:
            value, note = value_of(*figures) if all(figures) else (None, "")
        except (KeyError, TypeError, ValueError) as error:  # a log of another format: say so, go on
            value, note = None, f"unreadable figures ({error!r})"
        if value is None:
            met = None
            missing = next((name for name, f in zip(names, figures) if not f), names[0])
            note = note or why_missing(steps.get(missing))
        elif comparison == "runs":
            met = True
        else:
            met = value >= target if comparison == ">=" else value <= target
        rows.append({"issue": issue, "model": model, "measure": measure, "step": step_name, "value": value,
                     "unit": unit, "comparison": comparison, "target": target, "met": met, "note": note})
    return rows


def target_text(row):
    value, unit = row["value"], row["unit"]
    small = isinstance(value, float) and abs(value) < 10
    shown = "-" if value is None else f"{value:.3g}" if small else f"{value:,.0f}"
    goal = "runs, reports" if row["comparison"] == "runs" else f"{row['comparison']} {row['target']:,g}"
    verdict = {True: "met", False: "MISSED", None: "not measured"}[row["met"]]
    return (f"{row['issue']:<3} {row['model'] + ': ' + row['measure']:<74} {shown + ' ' + unit:>16} "
            f"{goal:>14}  {verdict}" + (f"  ({row['note']})" if row["note"] else ""))


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
    # The kernel tests, memcheck and every suite the script listed (GPU_SUITES), run or not.
    listed = read(os.path.join(args.logs, "expected_suites.txt")).split()
    expected = {"cuda_tests", "memcheck"} | set(listed or ["text_parity", "engine_parity"])
    targets = targets_of(steps, benches, speech)
    summary = {
        "commit": commit, "machine": machine[1:], "steps": steps, "build_ok": build_ok, "suites": suites,
        "targets": targets, "text_benchmarks": benches, "speech_benchmarks": speech,
        "all_passed": build_ok and expected <= set(suites) and all(s["passed_all"] for s in suites.values()),
    }
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)

    text = [f"izwi GPU check, commit {commit}", *machine[1:3], "",
            f"build: {'ok' if build_ok else 'FAILED'} ({steps.get('build', {}).get('seconds', 0)} s)", "",
            f"{'suite':<18} {'exit':>7} {'passed':>7} {'failed':>7} {'skipped':>8} {'seconds':>8}"]
    for name, s in sorted(suites.items()):
        extra = f"  memcheck errors: {s['errors']}" if "errors" in s else ""
        text.append(f"{name:<18} {s['status']:>7} {s.get('passed', '-'):>7} {s.get('failed', '-'):>7} "
                    f"{s.get('skipped', '-'):>8} {s['seconds']:>8}{extra}")
    for name in sorted(expected - set(suites)):
        text.append(f"{name:<18} {'not run':>7}")
    text += ["", "targets (issue 38: GPU text speed, issue 39: speech on the GPU, issue 40: FP8 weights; random "
             "weights at the released shapes, bf16 unless FP8)",
             f"{'iss':<3} {'model: measure':<74} {'measured':>16} {'target':>14}  status"]
    text += [target_text(row) for row in targets]
    met = sum(row["met"] is True for row in targets)
    unmeasured = sum(row["met"] is None for row in targets)
    text.append(f"{met} of {len(targets)} targets met, {len(targets) - met - unmeasured} missed, "
                f"{unmeasured} not measured")
    # tok/s: while every request decodes ("-": no such window); decode tok/s: after the last prompt.
    text += ["", f"{'model':<16} {'conc':>5} {'tok/s':>10} {'decode tok/s':>13} {'wall tok/s':>11} "
             f"{'of roofline':>12} {'HF tok/s':>10} {'x HF':>7} {'x HF wall':>10}"]
    for name, b in benches.items():
        if not b.get("levels"):
            text.append(f"{name:<16} bench exit {b.get('status')}")
        for level in b.get("levels", []):
            cells = [level["tokens_per_s"], level["decode_tokens_per_s"], level["roofline_fraction"],
                     level["transformers_tokens_per_s"], level["vs_transformers"], level["vs_transformers_wall"]]
            shown = ["-" if v is None else f"{v:.1f}" if i < 2 else f"{v:g}" for i, v in enumerate(cells)]
            text.append(f"{name:<16} {level['concurrency']:>5} {shown[0]:>10} {shown[1]:>13} "
                        f"{level['wall_tokens_per_s']:>11.1f} {shown[2]:>12} {shown[3]:>10} {shown[4]:>7} "
                        f"{shown[5]:>10}")
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
        text.append(f"speech {name:<22} exit {s['status']}" + ("" if s["report"] else ", no report"))
    text.append("")
    text.append("all checks passed" if summary["all_passed"] else "NOT all checks passed")
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
