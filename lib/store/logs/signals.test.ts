import { describe, expect, test } from "vitest";
import { classifyLine, LOG_SIGNALS, parseLineTs, SIGNAL_TABLE, type LogSignalName } from "@/lib/store/logs/signals";

/** Real-looking lines, one framework's wording each (what the table must recognise). */
const POSITIVE: [LogSignalName, string][] = [
  ["crash", "Traceback (most recent call last):"],
  ["crash", '(RolloutManager pid=81234) Traceback (most recent call last):'],
  ["crash", "Fatal Python error: Segmentation fault"],
  ["crash", "/var/spool/slurmd/job4242/slurm_script: line 31: 77120 Segmentation fault      (core dumped) python train.py"],
  ["crash", "bash: line 1: 90211 Aborted                 (core dumped) python3 -m sglang.launch_server"],
  ["crash", "srun: error: gpu-node-07: task 3: Exited with exit code 1"],
  ["crash", "[2026-12-01 22:03:04] worker 4 exited with code 139"],
  ["crash", "subprocess.CalledProcessError: Command '['python', 'convert.py']' returned non-zero exit status 2."],
  ["crash", "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: "],
  ["crash", "  exitcode  : -11 (pid: 5513)"],
  ["oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.06 GiB is free."],
  ["oom", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB"],
  ["oom", "RuntimeError: CUDA error: out of memory"],
  ["oom", "[Tue Dec  1 22:03:04 2026] python invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0"],
  ["oom", "Out of memory: Killed process 77120 (python) total-vm:812345678kB, anon-rss:501234567kB"],
  ["oom", "slurmstepd: error: Detected 1 oom-kill: event(s) in StepId=4242.0. Some of your processes may have been killed by the cgroup out-of-memory handler."],
  ["nccl_error", "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5"],
  ["nccl_error", "ncclInternalError: Internal check failed."],
  ["nccl_error", "[rank3]:[E1201 22:03:04.123456 77120 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4242, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out."],
  ["ray_actor_died", "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task."],
  ["ray_actor_died", "ray.exceptions.RayActorError: The actor died because of an error raised in its creation task"],
  ["ray_actor_died", "(raylet) A worker died or was killed while executing a task by an unexpected system error. The actor is dead because its worker process has died."],
  ["engine_error", "[2026-12-01 22:03:04 TP0] Scheduler hit an exception: Traceback (most recent call last):"],
  ["engine_error", "[2026-12-01 22:03:05] Received sigquit from a child process. It usually means the child failed."],
  ["engine_error", "[2026-12-01 22:03:06] TokenizerManager hit an exception: Traceback (most recent call last):"],
  ["engine_error", "INFO 12-01 22:03:07 rollout.py:311] Restarting engine 2 after health check failure"],
  ["kv_transfer_timeout", "[2026-12-01 22:03:04 DP0 TP0] Request 8812 KVTransferError(bootstrap_room=421): Request 8812 timed out after 300.0s in KVPoll.Bootstrapping"],
  ["kv_transfer_timeout", "WARNING mooncake: KV transfer to 10.0.0.7:17000 timed out after 60 s"],
  ["nan_inf", "WARNING megatron: found NaN in local grad norm in backward pass before data-parallel communication collective"],
  ["nan_inf", "step 42 | loss: nan | grad_norm: 3.1e+02 | lr: 1.0e-06"],
  ["nan_inf", "train/grad_norm=inf, skipping this step"],
  ["nan_inf", "Detected NaN in loss at iteration 1200"],
  ["nan_inf", "Skipping step because of Inf gradients"],
];

const NEGATIVE: string[] = [
  "INFO 12-01 22:03:04 Training step 42: loss=0.4312 grad_norm=1.27",
  "[2026-12-01 22:03:04 TP0] Prefill batch. #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.01",
  "worker 4 exited with code 0",
  "Process finished with exit code 0",
  "NCCL INFO Channel 00/24 : 0 1 2 3 4 5 6 7",
  "loss_scale: 65536.0 | info: rollout ready",
  "Ray actor RolloutManager started on node 10.0.0.2",
  "KV transfer finished in 0.12 s",
  "torch.cuda.memory_allocated: 12.5 GiB",
];

describe("signal table", () => {
  test("every signal has a row, in order, with at least one pattern", () => {
    expect(SIGNAL_TABLE.map((r) => r.signal)).toEqual([...LOG_SIGNALS]);
    for (const r of SIGNAL_TABLE) expect(r.patterns.length).toBeGreaterThan(0);
  });

  test.each(POSITIVE)("%s ← %s", (signal, line) => {
    expect(classifyLine(line)).toContain(signal);
  });

  test("every signal is exercised by the sample lines", () => {
    expect(new Set(POSITIVE.map(([s]) => s))).toEqual(new Set(LOG_SIGNALS));
  });

  test.each(NEGATIVE)("nothing ← %s", (line) => {
    expect(classifyLine(line)).toEqual([]);
  });

  test("an SGLang scheduler exception counts as engine_error and crash, each once", () => {
    expect(classifyLine("[2026-12-01 22:03:04 TP0] Scheduler hit an exception: Traceback (most recent call last):")).toEqual([
      "crash",
      "engine_error",
    ]);
  });
});

describe("parseLineTs", () => {
  const ref = Date.UTC(2026, 11, 1, 23, 0, 0) / 1000;
  test.each([
    ["[2026-12-01 22:03:04 TP0] Scheduler hit an exception", Date.UTC(2026, 11, 1, 22, 3, 4) / 1000],
    ["2026-12-01 22:03:04,250 ERROR worker.py:1 boom", Date.UTC(2026, 11, 1, 22, 3, 4) / 1000 + 0.25],
    ["2026-12-01T22:03:04.5Z crash", Date.UTC(2026, 11, 1, 22, 3, 4) / 1000 + 0.5],
    ["2026-12-01 23:03:04 +01:00 crash", Date.UTC(2026, 11, 1, 22, 3, 4) / 1000],
    ["[rank3]:[E1201 22:03:04.123456 77120 ProcessGroupNCCL.cpp:616] x", null],
    ["E1201 22:03:04.500000 77120 ProcessGroupNCCL.cpp:616] x", Date.UTC(2026, 11, 1, 22, 3, 4) / 1000 + 0.5],
    ["Dec  1 22:03:04 gpu-node-07 kernel: Out of memory: Killed process 1", Date.UTC(2026, 11, 1, 22, 3, 4) / 1000],
    ["Traceback (most recent call last):", null],
  ])("%s", (line, want) => {
    const got = parseLineTs(line, ref);
    if (want === null) expect(got).toBeNull();
    else expect(got).toBeCloseTo(want, 6);
  });
});
