#!/usr/bin/env python3
"""scripts/gpu_check_summary.py over the hand-made logs of tests/data/gpu_check_logs: the suites'
counts, the memcheck errors, a failing suite making the run not pass, and each benchmark's ratios
to the roofline and to transformers computed from the figures in the logs. GpuCheckTargets adds
logs made up here (no fixture files: the GPU machine's transfer is at its limit) for the issues'
targets: met, missed, and not measured with the reason (skipped for time, no checkpoint, timed out)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOGS = os.path.join(ROOT, "tests", "data", "gpu_check_logs")


class GpuCheckSummary(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.mkdtemp()
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gpu_check_summary.py"), "--logs", LOGS,
                        "--out", cls.out], check=True)
        with open(os.path.join(cls.out, "summary.json")) as f:
            cls.summary = json.load(f)
        with open(os.path.join(LOGS, "bench_llama-3.2-1b.log")) as f:
            cls.izwi = json.loads(f.read().strip().splitlines()[-1])

    def test_suites_are_counted_and_one_failure_fails_the_run(self):
        suites = self.summary["suites"]
        self.assertEqual(self.summary["commit"], "0123456789abcdef0123456789abcdef01234567")
        self.assertTrue(self.summary["build_ok"])
        self.assertEqual((suites["cuda_tests"]["passed"], suites["cuda_tests"]["skipped"]), (2, 1))
        self.assertEqual(suites["memcheck"]["errors"], 0)
        self.assertTrue(suites["text_parity"]["passed_all"])
        self.assertEqual((suites["engine_parity"]["passed"], suites["engine_parity"]["failed"]), (1, 1))
        self.assertFalse(suites["engine_parity"]["passed_all"])
        self.assertFalse(self.summary["all_passed"])
        self.assertEqual(self.summary["speech_benchmarks"]["izwi-tts-bench"]["status"], "no --device")

    def test_benchmark_ratios_come_from_the_logged_figures(self):
        bench = self.summary["text_benchmarks"]["llama-3.2-1b"]
        roofline = self.izwi["bandwidth_gbps"] * 1e9 / self.izwi["weight_bytes"]
        self.assertAlmostEqual(bench["roofline_tokens_per_s"], roofline)
        levels = {level["concurrency"]: level for level in bench["levels"]}
        one = self.izwi["results"][0]
        self.assertEqual(one["concurrency"], 1)
        self.assertAlmostEqual(levels[1]["roofline_fraction"], one["tokens_per_s"] / roofline, places=3)
        self.assertAlmostEqual(levels[1]["vs_transformers"], one["tokens_per_s"] / 20.0, places=3)
        self.assertAlmostEqual(levels[1]["vs_transformers_wall"], one["wall_tokens_per_s"] / 18.5, places=3)
        self.assertIsNone(levels[2]["roofline_fraction"])  # the roofline bounds batch 1 only
        self.assertAlmostEqual(bench["prefill"]["transformers_over_izwi"], 25.0 / self.izwi["prefill"]["ttft_ms"],
                               places=3)

    def test_the_table_names_every_suite_and_the_verdict(self):
        with open(os.path.join(self.out, "summary.txt")) as f:
            table = f.read()
        for name in ("cuda_tests", "memcheck", "text_parity", "engine_parity", "llama-3.2-1b"):
            self.assertIn(name, table)
        self.assertIn("NOT all checks passed", table)


def run_summary(logs):
    out = tempfile.mkdtemp()
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gpu_check_summary.py"), "--logs", logs,
                    "--out", out], check=True)
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(out, "summary.txt")) as f:
        return summary, f.read()


class GpuCheckTargets(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        logs = os.path.join(tempfile.mkdtemp(), "logs")
        shutil.copytree(LOGS, logs)
        steps = [("bench_llama-3.2-1b-256", "0", 40), ("bench_llama-3.2-1b-fp8", "0", 30),
                 ("bench_qwen3-0.6b", "skipped", 0),
                 ("bench_lfm2-1.2b", "no checkpoint", 0), ("speech_qwen3-tts-0.6b", "0", 50),
                 ("speech_voxtral-realtime-4b", "0", 30), ("speech_lfm2-audio-1.5b", "124", 120)]
        with open(os.path.join(logs, "status.tsv"), "a") as f:
            f.writelines(f"{name}\t{status}\t{seconds}\n" for name, status, seconds in steps)
        with open(os.path.join(logs, "expected_suites.txt"), "w") as f:
            f.write("text_parity\nengine_parity\ntts_parity\nvoxtral_parity\n")
        # A suite whose filter matched nothing: exit 0, no test.
        with open(os.path.join(logs, "status.tsv"), "a") as f:
            f.write("voxtral_parity\t0\t3\n")
        with open(os.path.join(logs, "voxtral_parity.xml"), "w") as f:
            f.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites tests="0" failures="0" name="AllTests">'
                    '\n</testsuites>\n')
        reports = {
            # 256 requests: no window with all of them decoding (tokens_per_s null), the decode figure after it.
            "bench_llama-3.2-1b-256": {
                "bandwidth_gbps": 4000.0, "weight_bytes": 2471559168, "results": [
                    {"concurrency": 256, "tokens_per_s": None, "decode_tokens_per_s": 30000.0,
                     "decode_requests_mean": 120.0, "wall_tokens_per_s": 20000.0, "ttft_p50_ms": 900.0}]},
            "bench_llama-3.2-1b-fp8": {"bandwidth_gbps": 4000.0, "weight_bytes": 1300000000, "results": [
                {"concurrency": 128, "tokens_per_s": 30000.0, "wall_tokens_per_s": 20000.0, "ttft_p50_ms": 50.0}]},
            "speech_qwen3-tts-0.6b": {"results": [
                {"concurrency": 1, "rtf_p50": 0.04, "rtf_max": 0.04, "ttfa_p50_ms": 90.0},
                {"concurrency": 16, "rtf_p50": 0.3, "rtf_max": 0.5, "ttfa_p50_ms": 150.0},
                {"concurrency": 64, "rtf_p50": 0.9, "rtf_max": 1.2, "ttfa_p50_ms": 400.0}]},
            "speech_voxtral-realtime-4b": {"results": [
                {"streams": 1, "latency_p99_ms": 100.0}, {"streams": 32, "latency_p99_ms": 300.0},
                {"streams": 100, "latency_p99_ms": 350.0}], "max_realtime_streams": 100},
        }
        for name, report in reports.items():
            with open(os.path.join(logs, name + ".log"), "w") as f:
                f.write("a table the bench prints first\n" + json.dumps(report) + "\n")
        cls.summary, cls.table = run_summary(logs)
        cls.targets = {(row["model"], row["measure"]): row for row in cls.summary["targets"]}

    def target(self, model, measure_start):
        rows = [row for (m, measure), row in self.targets.items() if m == model and measure.startswith(measure_start)]
        self.assertEqual(len(rows), 1, (model, measure_start))
        return rows[0]

    def test_every_target_of_the_issues_has_a_row(self):
        self.assertEqual(len(self.summary["targets"]), 14)
        self.assertEqual({row["issue"] for row in self.summary["targets"]}, {"38", "39", "40"})

    def test_the_fp8_ratio_needs_both_benches_at_128_requests(self):
        # The FP8 bench ran, the bf16 log (a CPU run) has no 128-request level.
        fp8 = self.target("llama-3.2-1b", "FP8 weights vs bf16")
        self.assertIsNone(fp8["met"])
        self.assertEqual(fp8["note"], "no 128-request decode figure in both benches")
        # Both at 128 requests: their ratio against 1.6x.
        logs = os.path.join(tempfile.mkdtemp(), "logs")
        shutil.copytree(LOGS, logs)
        for name, tokens_per_s in (("bench_llama-3.2-1b", 20000.0), ("bench_llama-3.2-1b-fp8", 36000.0)):
            report = {"bandwidth_gbps": 4000.0, "weight_bytes": 2471559168, "results": [
                {"concurrency": 128, "tokens_per_s": tokens_per_s, "wall_tokens_per_s": 1.0, "ttft_p50_ms": 1.0}]}
            with open(os.path.join(logs, name + ".log"), "w") as f:
                f.write(json.dumps(report) + "\n")
        with open(os.path.join(logs, "status.tsv"), "a") as f:
            f.write("bench_llama-3.2-1b-fp8\t0\t30\n")
        summary, _ = run_summary(logs)
        row = next(row for row in summary["targets"] if row["measure"].startswith("FP8 weights"))
        self.assertAlmostEqual(row["value"], 1.8)
        self.assertIs(row["met"], True)
        # Without the FP8 bench's step: not run.
        os.remove(os.path.join(logs, "bench_llama-3.2-1b-fp8.log"))
        with open(os.path.join(logs, "status.tsv")) as f:
            kept = [line for line in f if not line.startswith("bench_llama-3.2-1b-fp8")]
        with open(os.path.join(logs, "status.tsv"), "w") as f:
            f.writelines(kept)
        summary, _ = run_summary(logs)
        row = next(row for row in summary["targets"] if row["measure"].startswith("FP8 weights"))
        self.assertEqual((row["met"], row["note"]), (None, "not run"))

    def test_the_prefill_row_says_how_the_prompt_was_chunked(self):
        logs = os.path.join(tempfile.mkdtemp(), "logs")
        shutil.copytree(LOGS, logs)
        report = {"bandwidth_gbps": 4000.0, "weight_bytes": 2471559168, "results": [],
                  "prefill": {"prompt_tokens": 4096, "max_tokens_per_step": 4096, "steps": 1, "ttft_ms": 20.0}}
        with open(os.path.join(logs, "bench_llama-3.2-1b-prefill.log"), "w") as f:
            f.write(json.dumps(report) + "\n")
        with open(os.path.join(logs, "status.tsv"), "a") as f:
            f.write("bench_llama-3.2-1b-prefill\t0\t20\n")
        summary, _ = run_summary(logs)
        row = next(row for row in summary["targets"] if row["measure"].startswith("4,096-token prompt"))
        self.assertEqual((row["value"], row["met"]), (20.0, True))
        self.assertTrue(row["note"].startswith("1 steps of up to 4096 tokens"), row["note"])

    def test_met_and_missed_come_from_the_figures(self):
        roofline = self.target("llama-3.2-1b", "batch-1 decode")
        self.assertAlmostEqual(roofline["value"], self.summary["text_benchmarks"]["llama-3.2-1b"]["levels"][0]
                               ["roofline_fraction"])
        self.assertIs(roofline["met"], False)  # a CPU run's figure far below 0.6
        runs = self.target("llama-3.2-1b", "256 requests")
        self.assertEqual((runs["value"], runs["met"]), (30000.0, True))
        self.assertIn("never", runs["note"])  # no window with all 256 decoding
        self.assertIs(self.target("Qwen3-TTS 0.6B", "one stream: RTF")["met"], True)
        self.assertIs(self.target("Qwen3-TTS 0.6B", "one stream: time to first audio")["met"], False)
        streams = self.target("Qwen3-TTS 0.6B", "concurrent streams")
        self.assertEqual((streams["value"], streams["met"]), (16, False))  # 64 streams had one stream at RTF 1.2
        voxtral = self.target("Voxtral Realtime 4B", "live streams")
        self.assertEqual((voxtral["value"], voxtral["met"]), (100, True))
        self.assertIn("lower bound", voxtral["note"])

    def test_unmeasured_targets_say_why(self):
        self.assertEqual(self.target("qwen3-0.6b", "batch-1")["note"], "skipped: no time left")
        self.assertEqual(self.target("lfm2-1.2b", "batch-1")["note"], "not run: no checkpoint")
        chat = self.target("LFM2-Audio 1.5B", "chat: time to first audio")
        self.assertIsNone(chat["met"])
        self.assertEqual(chat["note"], "timed out after 120 s")
        self.assertEqual(self.target("llama-3.2-1b", "4,096-token prompt")["note"], "not run")  # its own step

    def test_a_listed_suite_that_did_not_run_fails_the_run_and_the_table_says_so(self):
        self.assertFalse(self.summary["all_passed"])
        self.assertFalse(self.summary["suites"]["voxtral_parity"]["passed_all"])  # no test matched its filter
        self.assertRegex(self.table, r"tts_parity +not run")
        self.assertIn("Voxtral Realtime 4B: live streams keeping up", self.table)
        self.assertRegex(self.table, r"3 of 14 targets met, 3 missed, 8 not measured")


if __name__ == "__main__":
    unittest.main()
