"""Tests for rlboard_client.

Run by collector/clients/python/client.test.ts against a real collector
(RLBOARD_TEST_URL); that test then checks the bytes written on disk. The
tests without a collector (dead URL, full queue) run standalone as well:
``python3 -m unittest test_rlboard_client``.
"""

import argparse
import logging
import os
import pathlib
import time
import unittest

from rlboard_client import META_ARGS_KEYS, OPEN_T1, RlboardClient, args_snapshot

URL = os.environ.get("RLBOARD_TEST_URL")
DEAD_URL = "http://127.0.0.1:9"

logging.getLogger("rlboard_client").setLevel(logging.ERROR)


class FakeScalar:
    """Stands in for a numpy / torch zero-dim scalar: only __float__."""

    def __init__(self, v):
        self.v = v

    def __float__(self):
        return float(self.v)


class BadTensor:
    def __float__(self):
        raise ValueError("only one element tensors can be converted to Python scalars")


@unittest.skipUnless(URL, "needs RLBOARD_TEST_URL (a running collector)")
class LiveCollectorTest(unittest.TestCase):
    def test_train_rank_pushes_phases_metrics_and_hook_events(self):
        c = RlboardClient(URL, node="10.0.0.2", gpus=[3], rank=lambda: 3, role="train")
        c.open_phase("train_wait", 1755000040.0)
        c.phase("actor_train", 1755000081.2, 1755000120.7)
        hook = c.timer_hook()
        hook("update_weights", 1755000200.5, None)
        hook("update_weights", 1755000200.5, 1755000230.25)
        hook.on_start("save_model", 1755000300.0)
        with c.phase_ctx("log_probs"):
            time.sleep(0.01)
        c.log_metrics(
            "rollout/step",
            3,
            {
                "rollout/rewards_mean": 0.5,
                "perf/step_time": 95.0,
                "rollout/step": 3,
                "ok": True,
                "name": "sglang \u00e9",
                "train/loss": float("nan"),
                "np": FakeScalar(2.5),
                "lst": [1, 2],
            },
            ts=1755000100.0,
        )
        c.log_metrics("train/step", None, {"train/step": 96, "x": BadTensor()}, ts=1755000101.0)  # dropped whole
        c.log_metrics("eval/step", None, {"eval/step": 2.0}, ts=1755000102.0)
        self.assertTrue(c.flush(10))
        c.close()
        self.assertEqual(c.stats["failed"], 0)
        self.assertEqual(c.stats["dropped"], 0)
        self.assertEqual(c.stats["sent"], 9)

    def test_rollout_manager_pushes_topology_trajectories_data_buffer_and_meta(self):
        c = RlboardClient(URL, node="10.0.0.9", role="rollout_manager")
        c.meta({"wandb_group": "g", "colocate": True, "lr": 1.0}, run_name="py-run")
        c.topology(
            [{"addr": "http://10.0.0.1:15000", "worker_type": "regular", "engine_rank": 0, "gpus": [["10.0.0.1", 0]], "gpu_uuids": [None]}],
            ts=1755000030.5,
        )
        c.phase("rollout", 1755000040.0, 1755003641.5)
        c.trajectory_event("attempt_start", 96, 12, ts=1755000200.0)
        c.trajectory_event("gen_end", 96, 12, 1, "", 412, ts=1755000208.9)
        c.trajectory_event("bogus", 1, ts=1755000209.0)  # unknown kind: dropped client-side
        c.data_buffer(12, ts=1755000101.0)
        self.assertTrue(c.flush(10))
        c.close()
        self.assertEqual(c.stats["failed"], 0)

    def test_rejected_records_are_counted_not_raised(self):
        c = RlboardClient(URL, node="10.0.0.3", role="not-a-role")
        c.phase("x", 1.0, 2.0)
        self.assertTrue(c.flush(10))
        c.close()
        self.assertEqual(c.stats["rejected"], 1)


class OfflineTest(unittest.TestCase):
    def test_dead_collector_never_raises(self):
        c = RlboardClient(DEAD_URL, node="n", timeout=0.5)
        c.phase("a", 1.0, 2.0)
        c.log_metrics("s", 1, {"a": 1})
        with c.phase_ctx("b"):
            pass
        c.topology([{"addr": "http://x:1"}])
        self.assertTrue(c.flush(5))
        c.close()
        self.assertGreaterEqual(c.stats["failed"], 3)
        c.phase("after-close", 1.0, 2.0)  # ignored, no error

    def test_full_queue_drops_instead_of_blocking(self):
        c = RlboardClient(DEAD_URL, node="n", queue_size=3)
        c._post = lambda *a: time.sleep(0.3)  # a slow collector
        c.open_phase("first")  # urgent: the sender thread is now busy posting
        time.sleep(0.05)
        t = time.monotonic()
        for i in range(100):
            c.phase("p", float(i), float(i) + 1)
        self.assertLess(time.monotonic() - t, 0.2)
        self.assertGreaterEqual(c.stats["dropped"], 90)
        c.close(2)

    def test_args_snapshot_takes_exactly_miles_keys_in_order(self):
        ns = argparse.Namespace(
            lr=1e-6,  # not a snapshot key
            sglang_mem_fraction_static=0.7,
            colocate=True,
            wandb_group="qwen3-8b-grpo",
            wandb_team=None,  # present with None: kept
            n_samples_per_prompt=8,
            hf_checkpoint=pathlib.PurePosixPath("/models/Qwen3-8B"),  # not JSON: as str
            router_policy=["cache_aware"],
        )
        snap = args_snapshot(ns)
        self.assertEqual(
            list(snap.items()),
            [
                ("wandb_group", "qwen3-8b-grpo"),
                ("wandb_team", None),
                ("colocate", True),
                ("n_samples_per_prompt", 8),
                ("hf_checkpoint", "/models/Qwen3-8B"),
                ("sglang_mem_fraction_static", 0.7),
                ("router_policy", ["cache_aware"]),
            ],
        )
        self.assertEqual(len(META_ARGS_KEYS), 23)
        full = args_snapshot({k: i for i, k in enumerate(reversed(META_ARGS_KEYS))})
        self.assertEqual(list(full), list(META_ARGS_KEYS))

    def test_bad_input_is_swallowed(self):
        c = RlboardClient(DEAD_URL, node="n")
        c.phase("x", "not a number", None)
        c.topology([{"no_addr": 1}])
        c.data_buffer("many")
        self.assertEqual(c.stats["queued"], 0)
        self.assertEqual(OPEN_T1, -1.0)
        c.close(1)


if __name__ == "__main__":
    unittest.main()
