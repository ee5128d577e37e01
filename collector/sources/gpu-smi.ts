/**
 * Parsers for `nvidia-smi` CSV and `amd-smi` JSON output, mapped onto the
 * quantities of docs/formats.md §4.5/§4.6 (util %, MiB floored, W floored).
 *
 * `[N/A]` handling: a device whose util or memory reads `[N/A]` is skipped
 * for that tick (like an NVML read error); an unavailable power reading
 * becomes 0 W (as the AMD path of the reference does) so util and memory are
 * not lost on boards without a power sensor.
 */

export const NVIDIA_GPU_QUERY = "index,uuid,utilization.gpu,memory.used,power.draw";
export const NVIDIA_APPS_QUERY = "gpu_uuid,pid,process_name,used_memory";

export interface GpuReading {
  gpu: number;
  uuid: string | undefined;
  util: number;
  memMb: number;
  powerW: number;
}

export interface ProcessReading {
  /** Device, by UUID (nvidia-smi) or index (amd-smi). */
  uuid: string | undefined;
  gpu: number | undefined;
  pid: number;
  name: string;
  memMb: number;
}

function isNA(s: string): boolean {
  return s === "" || s.startsWith("[N/A") || s === "N/A" || s.startsWith("[Not Supported") || s.startsWith("[Unknown");
}

function num(s: string): number | undefined {
  if (isNA(s)) return undefined;
  const v = Number(s);
  return Number.isFinite(v) ? v : undefined;
}

/** A device line that yields no sample; `gpu`/`uuid` are set when known (the UUID map still learns them). */
export interface SkippedReading {
  error: string;
  gpu?: number;
  uuid?: string;
}

/** One `--query-gpu=index,uuid,utilization.gpu,memory.used,power.draw` line. */
export function parseNvidiaGpuLine(line: string): GpuReading | SkippedReading {
  const f = line.split(",").map((x) => x.trim());
  if (f.length < 5) return { error: `unexpected nvidia-smi line: ${JSON.stringify(line)}` };
  const [index, uuid, util, mem, power] = f as [string, string, string, string, string];
  const gpu = num(index);
  if (gpu === undefined || !Number.isInteger(gpu) || gpu < 0) return { error: `unexpected nvidia-smi line: ${JSON.stringify(line)}` };
  const u = num(util);
  const m = num(mem);
  if (u === undefined || m === undefined) {
    return { error: `GPU ${gpu}: utilization or memory unavailable (${util}, ${mem})`, gpu, uuid: isNA(uuid) ? undefined : uuid };
  }
  const p = num(power);
  return { gpu, uuid: isNA(uuid) ? undefined : uuid, util: Math.floor(u), memMb: Math.floor(m), powerW: p === undefined || p < 0 ? 0 : Math.floor(p) };
}

/** One `--query-compute-apps=gpu_uuid,pid,process_name,used_memory` line (names may contain commas). */
export function parseNvidiaProcessLine(line: string): ProcessReading | string {
  const f = line.split(",").map((x) => x.trim());
  if (f.length < 4) return `unexpected nvidia-smi process line: ${JSON.stringify(line)}`;
  const uuid = f[0] as string;
  const pid = num(f[1] as string);
  if (pid === undefined || !Number.isInteger(pid)) return `unexpected nvidia-smi process line: ${JSON.stringify(line)}`;
  const mem = num(f[f.length - 1] as string);
  const rawName = f.slice(2, -1).join(", ");
  return { uuid, gpu: undefined, pid, name: isNA(rawName) ? `pid ${pid}` : rawName, memMb: mem === undefined ? 0 : Math.floor(mem) };
}

// ---------------------------------------------------------------------------
// amd-smi JSON (shapes differ between ROCm releases: values may be bare
// numbers, numeric strings, "N/A", or {"value": x, "unit": "MB"} objects; the
// top level may be a list or {"gpu_data": [...]}).

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function asObject(v: Json | undefined): { [k: string]: Json } | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? v : undefined;
}

function deviceList(v: Json): Json[] {
  if (Array.isArray(v)) return v;
  const o = asObject(v);
  if (o) for (const k of ["gpu_data", "data", "gpus"]) if (Array.isArray(o[k])) return o[k];
  return [];
}

const UNIT_TO_MIB: Record<string, number> = { B: 1 / 1048576, KB: 1 / 1024, KIB: 1 / 1024, MB: 1, MIB: 1, GB: 1024, GIB: 1024 };

/** A scalar reading; `undefined` for N/A. `defaultUnit` applies to bare numbers when converting memory. */
function reading(v: Json | undefined, toMiB = false, defaultUnit = "MB"): number | undefined {
  let value: Json | undefined = v;
  let unit = defaultUnit;
  const o = asObject(v);
  if (o) {
    value = o.value;
    if (typeof o.unit === "string") unit = o.unit;
  }
  const n = typeof value === "number" ? value : typeof value === "string" && !isNA(value) && value.trim() !== "" ? Number(value) : NaN;
  if (!Number.isFinite(n)) return undefined;
  if (!toMiB) return n;
  const f = UNIT_TO_MIB[unit.toUpperCase()];
  return f === undefined ? undefined : n * f;
}

function gpuIndex(d: { [k: string]: Json }): number | undefined {
  const g = d.gpu ?? d.gpu_id ?? d.index;
  const n = typeof g === "number" ? g : typeof g === "string" ? Number(g) : NaN;
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

/** `amd-smi metric --usage --power --mem-usage --json`. Devices with unreadable util/VRAM are reported as strings. */
export function parseAmdMetrics(text: string): (GpuReading | string)[] {
  return deviceList(JSON.parse(text) as Json).map((d, i) => {
    const dev = asObject(d);
    if (!dev) return `amd-smi device ${i}: unexpected JSON`;
    const gpu = gpuIndex(dev) ?? i;
    const util = reading(asObject(dev.usage)?.gfx_activity);
    const mem = asObject(dev.mem_usage) ?? asObject(dev.memory_usage) ?? {};
    const memMb = reading(mem.used_vram ?? mem.vram_used, true);
    if (util === undefined || memMb === undefined) return `GPU ${gpu}: gfx_activity or used VRAM unavailable`;
    const power = asObject(dev.power) ?? {};
    let powerW = 0;
    for (const k of ["socket_power", "current_socket_power", "average_socket_power"]) {
      const p = reading(power[k]);
      if (p !== undefined && p >= 0 && p < 0xffff) {
        powerW = Math.floor(p);
        break;
      }
    }
    return { gpu, uuid: undefined, util: Math.floor(util), memMb: Math.floor(memMb), powerW };
  });
}

/** `amd-smi process --json`: rows with 0 MiB are bystanders and skipped (docs/formats.md §6.6). */
export function parseAmdProcesses(text: string): ProcessReading[] {
  const out: ProcessReading[] = [];
  deviceList(JSON.parse(text) as Json).forEach((d, i) => {
    const dev = asObject(d);
    if (!dev) return;
    const gpu = gpuIndex(dev) ?? i;
    const list = Array.isArray(dev.process_list) ? dev.process_list : [];
    for (const entry of list) {
      const e = asObject(entry);
      const info = asObject(e?.process_info) ?? e;
      if (!info) continue;
      const pid = typeof info.pid === "number" ? info.pid : Number(info.pid);
      if (!Number.isInteger(pid)) continue;
      const memMb = Math.floor(reading(asObject(info.memory_usage)?.vram_mem, true, "B") ?? 0);
      if (memMb === 0) continue;
      const name = typeof info.name === "string" && !isNA(info.name) && info.name !== "" ? info.name : `pid ${pid}`;
      out.push({ uuid: undefined, gpu, pid, name, memMb });
    }
  });
  return out;
}
