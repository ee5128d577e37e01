import fs from "node:fs";
import process from "node:process";
import path from "node:path";
// Synthetic big run for lib/store/telemetry/perf: 64 GPUs × 8 h at 1 Hz (usage: node gen.mjs OUT_DIR)
const root = process.argv[2];
const dash = path.join(root, "dashboard");
fs.rmSync(root, { recursive: true, force: true });
fs.mkdirSync(dash, { recursive: true });
const T0 = 1755000000, H = 8, NODES = 8, GPN = 8;
const key = (ts) => { const d = new Date(Math.floor(ts) * 1000); const p = (n) => String(n).padStart(2, "0"); return `${d.getUTCFullYear()}${p(d.getUTCMonth()+1)}${p(d.getUTCDate())}_${p(d.getUTCHours())}`; };
const f = (x) => (Number.isInteger(x) ? x.toFixed(1) : String(x));
const out = new Map();
const put = (rel, line) => { let a = out.get(rel); if (!a) out.set(rel, (a = [])); a.push(line); if (a.length > 20000) { fs.mkdirSync(path.dirname(path.join(dash, rel)), { recursive: true }); fs.appendFileSync(path.join(dash, rel), a.join("")); a.length = 0; } };
const flush = () => { for (const [rel, a] of out) { fs.mkdirSync(path.dirname(path.join(dash, rel)), { recursive: true }); fs.appendFileSync(path.join(dash, rel), a.join("")); a.length = 0; } };
fs.writeFileSync(path.join(dash, "meta.json"), JSON.stringify({ run_name: "bench", start_ts: T0, args: { sglang_max_running_requests: 256, colocate: false, n_samples_per_prompt: 8 }, schema_version: 1 }, null, 1));
const lanes = {};
for (let n = 0; n < NODES; n++) for (let g = 0; g < GPN; g++) lanes[`10.0.0.${n+1}:${g}`] = { ranks: [n*GPN+g], engine_addrs: [`http://10.0.0.${n+1}:15000`], roles: ["rollout", "train"] };
fs.writeFileSync(path.join(dash, "lane_catalog.json"), JSON.stringify({ version: 1, lanes }));
const engines = []; for (let n = 0; n < NODES; n++) engines.push({ addr: `http://10.0.0.${n+1}:15000`, worker_type: "regular", engine_rank: n, gpus: Array.from({length: GPN}, (_, g) => [`10.0.0.${n+1}`, g]), gpu_uuids: Array(GPN).fill(null) });
fs.writeFileSync(path.join(dash, "topology.jsonl"), JSON.stringify({ ts: T0 + 0.5, engines }) + "\n");
// gpu_util: per node batches of 5 ticks
for (let t = 0; t < H * 3600; t += 5) for (let n = 0; n < NODES; n++) for (let k = 0; k < 5; k++) { const ts = T0 + t + k + n * 0.001 + 0.123456; for (let g = 0; g < GPN; g++) { const u = ((t + k + g * 7) % 100); put(`gpu_util/${key(ts)}.jsonl`, `{"ts":${f(ts)},"node":"10.0.0.${n+1}","gpu":${g},"util":${u},"mem_mb":${60000 + g},"power_w":${300 + u}}\n`); } }
// phases: per step 100 s: rollout 0-60, train_wait 60-61, actor_train 61-95, update_weights 95-99
const metrics = [];
for (let s = 0; s * 100 < H * 3600; s++) {
  const b = T0 + s * 100;
  put(`phases/${key(b + 60)}.jsonl`, JSON.stringify({ name: "rollout", t0: b, t1: b + 60, node: "10.0.0.99", gpus: [], rank: -1, role: "rollout_manager" }) + "\n");
  for (let r = 0; r < NODES * GPN; r++) {
    const node = `10.0.0.${Math.floor(r / GPN) + 1}`, g = r % GPN;
    for (const [name, a, z] of [["train_wait", 60, 61], ["actor_train", 61, 95 + (r % 3) * 0.1], ["update_weights", 95.5, 99]]) {
      put(`phases/${key(b + a)}.jsonl`, JSON.stringify({ name, t0: b + a, t1: -1.0, node, gpus: [g], rank: r, role: "train" }).replace('"t1":-1', '"t1":-1.0') + "\n");
      put(`phases/${key(b + z)}.jsonl`, JSON.stringify({ name, t0: b + a, t1: b + z, node, gpus: [g], rank: r, role: "train" }) + "\n");
    }
  }
  metrics.push(JSON.stringify({ ts: b + 99, step_key: "rollout/step", step: s, metrics: { "perf/step_time": 99.0, "perf/wait_time_ratio": 0.6, "perf/actor_train_mfu": 0.3, "perf/mfu_peak_tflops": 989.0, "rollout/step": s } }) + "\n");
}
fs.writeFileSync(path.join(dash, "metrics.jsonl"), metrics.join(""));
// engine: every 2 s, 8 engines, dp 4, 8 metrics
const M = ["sglang_num_running_reqs", "sglang_num_queue_reqs", "sglang_gen_throughput", "sglang_token_usage", "sglang_cache_hit_rate", "sglang_generation_tokens_total", "sglang_num_requests_total", "sglang_num_aborted_requests_total"];
for (let t = 0; t < H * 3600; t += 2) { const ts = T0 + t + 0.25; for (let n = 0; n < NODES; n++) for (const m of M) for (let d = 0; d < 4; d++) { const v = m.endsWith("_total") ? t * (d + 1) : (t % 50) + d; put(`engine_series/${key(ts)}.jsonl`, `{"ts":${f(ts)},"addr":"http://10.0.0.${n+1}:15000","metric":"${m}","labels":{"dp_rank":"${d}"},"value":${f(v)}}\n`); } }
// trajectories: 256 samples per step, 3 events each
for (let s = 0; s * 100 < H * 3600; s++) { const b = T0 + s * 100; for (let i = 0; i < 256; i++) { const si = s * 256 + i; for (const [k, dt] of [["attempt_start", 0], ["gen_start", 1], ["attempt_end", 40 + (i % 20)]]) put(`trajectories/${key(b + dt)}.jsonl`, JSON.stringify({ ts: b + dt + 0.5, kind: k, sample_index: si, group_index: si >> 3, turn: -1, weight_version: String(s), detail: k === "attempt_end" ? "completed" : "" }) + "\n"); } }
flush();
