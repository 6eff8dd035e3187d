#!/usr/bin/env python3
"""scripts/gpu_check_summary.py over the hand-made logs of tests/data/gpu_check_logs: the suites'
counts, the memcheck errors, a failing suite making the run not pass, and each benchmark's ratios
to the roofline and to transformers computed from the figures in the logs."""
import json
import os
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


if __name__ == "__main__":
    unittest.main()
