/**
 * Test helper: fake `nvidia-smi` / `amd-smi` shell scripts written into a tmp
 * dir (put it first on PATH, or pass the path). The nvidia-smi fake prints
 * real `--format=csv,noheader,nounits` lines in a loop honouring `-lms`.
 */
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const FAKE_UUIDS = ["GPU-8a3e41f2-0c55-4b7e-9d41-3f6a2b0c9e11", "GPU-5f1c0b7e-1111-2222-3333-444455556666"];

/**
 * Writes `dir/nvidia-smi`. Env knobs read by the script at run time:
 * FAKE_SMI_TICKS (exit after N ticks, default forever), FAKE_SMI_CALLS (file
 * that gets one line per invocation).
 */
export function writeFakeNvidiaSmi(dir: string): string {
  const path = join(dir, "nvidia-smi");
  writeFileSync(
    path,
    `#!/bin/sh
[ -n "$FAKE_SMI_CALLS" ] && echo "$*" >> "$FAKE_SMI_CALLS"
case "$1" in
  --query-compute-apps=*)
    echo "${FAKE_UUIDS[0]}, 4321, sglang::scheduler_TP0, 40960"
    echo "${FAKE_UUIDS[1]}, 4400, /usr/bin/python3, [N/A]"
    echo "GPU-unknown, 99, ghost, 1"
    exit 0;;
esac
ms=1000
while [ $# -gt 0 ]; do
  if [ "$1" = "-lms" ]; then ms=$2; shift; fi
  shift
done
secs=$(awk "BEGIN { printf \\"%.3f\\", $ms / 1000 }")
n=0
while :; do
  n=$((n + 1))
  echo "0, ${FAKE_UUIDS[0]}, $((80 + n % 10)), 61234, 612.37"
  echo "1, ${FAKE_UUIDS[1]}, [N/A], [N/A], 100.00"
  echo "2, GPU-c, 5, 1024, [N/A]"
  if [ -n "$FAKE_SMI_TICKS" ] && [ "$n" -ge "$FAKE_SMI_TICKS" ]; then exit 3; fi
  sleep "$secs"
done
`,
  );
  chmodSync(path, 0o755);
  return path;
}

/** Writes `dir/amd-smi` answering `version`, `metric … --json` and `process --json`. */
export function writeFakeAmdSmi(dir: string): string {
  const path = join(dir, "amd-smi");
  const metric = JSON.stringify([
    {
      gpu: 0,
      usage: { gfx_activity: { value: 42, unit: "%" } },
      power: { socket_power: "N/A", current_socket_power: { value: 311, unit: "W" } },
      mem_usage: { used_vram: { value: 2048, unit: "MB" } },
    },
    { gpu: 1, usage: { gfx_activity: "N/A" }, power: {}, mem_usage: { used_vram: 5 } },
    { gpu: 2, usage: { gfx_activity: 7 }, power: { socket_power: 65535 }, mem_usage: { used_vram: "12" } },
  ]);
  const proc = JSON.stringify([
    {
      gpu: 0,
      process_list: [
        { process_info: { name: "python3", pid: 77, memory_usage: { vram_mem: { value: 3221225472, unit: "B" } } } },
        { process_info: { name: "N/A", pid: 78, memory_usage: { vram_mem: 1048576 } } },
        { process_info: { name: "idle", pid: 79, memory_usage: { vram_mem: 0 } } },
      ],
    },
  ]);
  writeFileSync(
    path,
    `#!/bin/sh
case "$1" in
  version) echo "AMDSMI Tool: 24.6.2"; exit 0;;
  metric) echo '${metric}'; exit 0;;
  process) echo '${proc}'; exit 0;;
esac
exit 2
`,
  );
  chmodSync(path, 0o755);
  return path;
}
