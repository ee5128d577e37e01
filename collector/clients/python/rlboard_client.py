"""rlboard producer client: push telemetry from a training job to the collector.

Standard library only. Copy this file next to your training code (or put its
directory on PYTHONPATH) and::

    from rlboard_client import RlboardClient

    client = RlboardClient("http://driver-host:7789", role="train", rank=0, gpus=[0])
    with client.phase_ctx("actor_train"):
        train_step()
    client.log_metrics("rollout/step", 3, {"rollout/rewards_mean": 0.5, "perf/step_time": 95.0})
    client.close()

Failure policy: the client NEVER raises into the training code and never
blocks it. Records go into a bounded queue (oldest kept, newest dropped and
counted when full) drained by one daemon thread that posts batches of up to
64 records or every 2 s (OPEN phase markers are sent at once). A failed post
drops that batch with a rate-limited warning (``logging`` logger
``rlboard_client``), exactly like miles' own sinks; counts are in
``client.stats``.

Record formats are those of the collector's on-disk streams (docs/formats.md §4):
``phases``, ``metrics``, ``topology``, ``trajectories``, ``data_buffer``,
``gpu``/``gpu_processes``. Python's ``json`` already writes floats as floats
(``95.0``) and NaN as ``NaN``, which the collector preserves.

Run header and router: ``client.record_args(args)`` sends the curated
``meta.args`` snapshot miles records (``META_ARGS_KEYS``, docs/formats.md
§4.1) from an argparse namespace, so the advisory's knob hints see the same
keys as under miles; ``client.set_router(url)`` re-points the collector's
SGLang scraper when the router restarts on a new address (miles'
``set_router``).

Host telemetry: ``client.register_procs()`` registers this process
(``os.getpid()``; or the ``pids`` given) with the collector's
``--host-telemetry`` sampler under a role (default: the client's role), so
its CPU, RSS, context switches and fd headroom are reported without a
``--host-procs`` pattern. Pids are node-local: register with the collector
running on the same node (a ``--gpu-only`` node reads ``--host-pid-file``).

Timer hook: ``client.timer_hook()`` returns a callable for a miles-style
``Timer`` event-sink list. Signature::

    hook(name: str, t0: float, t1: float | None) -> None

called with ``t1=None`` (or ``-1.0``) when the interval starts — an OPEN
marker is sent immediately — and with the real end time when it ends (a
closed record with the bit-identical ``t0``). ``hook.on_start(name, t0)`` and
``hook.on_end(name, t0, t1)`` are the same two events as methods.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import queue
import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = ["RlboardClient", "TimerHook", "OPEN_T1", "BATCH_MAX_EVENTS", "BATCH_MAX_SECONDS", "META_ARGS_KEYS", "args_snapshot"]

_log = logging.getLogger("rlboard_client")

OPEN_T1 = -1.0
BATCH_MAX_EVENTS = 64
BATCH_MAX_SECONDS = 2.0
WARN_SUPPRESS_SECONDS = 300.0

# stream -> collector route
_ROUTES = {
    "phases": "phases",
    "metrics": "metrics",
    "topology": "topology",
    "trajectories": "trajectories",
    "data_buffer": "data_buffer",
    "gpu_util": "gpu",
    "gpu_processes": "gpu_processes",
    "requests": "requests",
}
_TRAJECTORY_KINDS = ("attempt_start", "gen_start", "gen_end", "tool_start", "tool_end", "attempt_end")

# docs/formats.md §4.1: the attributes miles copies into meta.json "args", in this order.
META_ARGS_KEYS = (
    "wandb_group",
    "wandb_team",
    "wandb_project",
    "wandb_run_id",
    "wandb_host",
    "colocate",
    "num_gpus_per_node",
    "actor_num_nodes",
    "actor_num_gpus_per_node",
    "rollout_num_gpus",
    "rollout_num_gpus_per_engine",
    "rollout_batch_size",
    "n_samples_per_prompt",
    "rollout_max_response_len",
    "hf_checkpoint",
    "sglang_max_running_requests",
    "sglang_mem_fraction_static",
    "sglang_load_balance_method",
    "use_miles_router",
    "router_dp_aware",
    "router_policy",
    "sglang_router_policy",
    "router_assignment_mode",
)

_FLUSH = object()
_STOP = object()


def _node_ip() -> str:
    """This host's outward-facing IPv4 address (no packet is sent)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            return str(s.getsockname()[0])
    except OSError:
        return "127.0.0.1"


class _Warner:
    """First warning per key passes; repeats are suppressed for 300 s."""

    def __init__(self) -> None:
        self._until: Dict[str, float] = {}
        self._lock = threading.Lock()

    def warn(self, key: str, msg: str, *args: Any) -> None:
        now = time.monotonic()
        with self._lock:
            if self._until.get(key, 0.0) > now:
                return
            self._until[key] = now + WARN_SUPPRESS_SECONDS
        try:
            _log.warning(msg + " (further warnings suppressed for %ds)", *args, int(WARN_SUPPRESS_SECONDS))
        except Exception:  # noqa: BLE001 - logging must never break training
            pass


def _scalar_metrics(metrics: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """Keep int/float/bool/str; convert float()-able objects (numpy, torch scalars); drop the rest.

    Returns None when a value claims float conversion but fails (e.g. a
    multi-element tensor): the whole record is dropped, as in miles.
    """
    out: Dict[str, Any] = {}
    for k, v in metrics.items():
        if isinstance(v, (bool, int, float, str)):
            out[str(k)] = v
        elif hasattr(v, "__float__") and not isinstance(v, (list, tuple, dict)):
            try:
                out[str(k)] = float(v)
            except Exception:  # noqa: BLE001
                return None
    return out


def _json_value(v: Any) -> Any:
    """argparse values as JSON: scalars and None as they are, lists/tuples/dicts element-wise, anything else as str."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): _json_value(x) for k, x in v.items()}
    return str(v)


_SKIP = object()


def _meta_scalar(v: Any) -> Any:
    if hasattr(v, "item") and callable(v.item) and not isinstance(v, (str, bytes)):
        try:
            v = v.item()  # numpy / torch scalars
        except Exception:  # noqa: BLE001
            return _SKIP
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else _SKIP
    return _SKIP


def _meta_value(v: Any) -> Any:
    """A meta_info value for the requests stream: a scalar, a flat dict of scalars, or _SKIP."""
    if isinstance(v, Mapping):
        out = {}
        for k, x in v.items():
            x = _meta_scalar(x)
            if x is not _SKIP:
                out[str(k)] = x
        return out
    return _meta_scalar(v)


def args_snapshot(namespace: Any) -> Dict[str, Any]:
    """The curated ``meta.args`` of miles: each ``META_ARGS_KEYS`` attribute present on ``namespace``, in that order.

    A present attribute is included even when its value is None; an absent one
    is skipped. ``namespace`` is an ``argparse.Namespace`` (or any object, or a
    mapping of the same names).
    """
    out: Dict[str, Any] = {}
    for key in META_ARGS_KEYS:
        if isinstance(namespace, Mapping):
            if key in namespace:
                out[key] = _json_value(namespace[key])
        elif hasattr(namespace, key):
            out[key] = _json_value(getattr(namespace, key))
    return out


def _as_step(s: Any) -> Optional[int]:
    """Steps are ints; integral floats and numpy ints are converted, anything else becomes null."""
    if s is None or isinstance(s, bool):
        return None
    if isinstance(s, int):
        return s
    try:
        f = float(s)
    except Exception:  # noqa: BLE001
        return None
    return int(f) if f.is_integer() else None


class TimerHook:
    """Event sink for a miles-style Timer: ``hook(name, t0, t1)``; ``t1`` None/-1.0 = started."""

    def __init__(self, client: "RlboardClient") -> None:
        self._client = client

    def __call__(self, name: str, t0: float, t1: Optional[float] = None) -> None:
        if t1 is None or t1 == OPEN_T1:
            self.on_start(name, t0)
        else:
            self.on_end(name, t0, t1)

    def on_start(self, name: str, t0: float) -> None:
        self._client.open_phase(name, t0)

    def on_end(self, name: str, t0: float, t1: float) -> None:
        self._client.phase(name, t0, t1)


class RlboardClient:
    """Fire-and-forget producer. Thread-safe; every public method swallows its own errors."""

    def __init__(
        self,
        url: str = "http://127.0.0.1:7789",
        *,
        node: Optional[str] = None,
        gpus: Optional[Sequence[int]] = None,
        rank: Union[int, Callable[[], int]] = -1,
        role: str = "train",
        queue_size: int = 10000,
        batch_max_events: int = BATCH_MAX_EVENTS,
        batch_max_seconds: float = BATCH_MAX_SECONDS,
        timeout: float = 5.0,
    ) -> None:
        self.url = url.rstrip("/")
        self.node = node or _node_ip()
        self.gpus = [int(g) for g in (gpus or [])]
        self.role = role
        self._rank_source = rank
        self._rank = -1
        self._timeout = timeout
        self._batch_max_events = batch_max_events
        self._batch_max_seconds = batch_max_seconds
        self._queue: "queue.Queue[Any]" = queue.Queue(maxsize=max(1, queue_size))
        self._warner = _Warner()
        self._stats_lock = threading.Lock()
        self.stats = {"queued": 0, "sent": 0, "dropped": 0, "failed": 0, "rejected": 0}
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="rlboard-client", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ identity

    @property
    def rank(self) -> int:
        """Resolved lazily and re-resolved while it is still -1 (as miles' train sinks do)."""
        if self._rank < 0:
            src = self._rank_source
            try:
                self._rank = int(src() if callable(src) else src)
            except Exception:  # noqa: BLE001
                self._rank = -1
        return self._rank

    # ------------------------------------------------------------------ producers

    def phase(self, name: str, start: float, end: float) -> None:
        """A closed Timer interval [start, end] (epoch seconds)."""
        self._guard(lambda: self._enqueue("phases", self._phase_record(name, start, end), urgent=False))

    def open_phase(self, name: str, start: Optional[float] = None) -> float:
        """Send an OPEN marker now; returns t0 (pass the same value to ``phase`` when it ends)."""
        t0 = float(time.time() if start is None else start)
        self._guard(lambda: self._enqueue("phases", self._phase_record(name, t0, OPEN_T1), urgent=True))
        return t0

    @contextlib.contextmanager
    def phase_ctx(self, name: str) -> Iterator[None]:
        """``with client.phase_ctx("actor_train"):`` → OPEN marker at entry, closed record at exit."""
        t0 = self.open_phase(name)
        try:
            yield
        finally:
            self.phase(name, t0, time.time())

    def log_metrics(
        self,
        step_key: Optional[str],
        step: Optional[int],
        metrics: Mapping[str, Any],
        ts: Optional[float] = None,
    ) -> None:
        """One metrics.jsonl record; ``step`` defaults to ``metrics[step_key]``."""

        def build() -> None:
            values = _scalar_metrics(metrics)
            if values is None:
                self._warner.warn("metrics-float", "rlboard: metrics record dropped: a value could not be converted to float")
                return
            raw = step if step is not None else (metrics.get(step_key) if step_key is not None else None)
            rec = {
                "ts": float(time.time() if ts is None else ts),
                "step_key": step_key,
                "step": _as_step(raw),
                "metrics": values,
            }
            self._enqueue("metrics", rec, urgent=False)

        self._guard(build)

    def topology(self, engines: Sequence[Mapping[str, Any]], ts: Optional[float] = None) -> None:
        """The complete engine set: dicts with addr, worker_type, engine_rank, gpus [[node, gpu]...], gpu_uuids."""

        def build() -> None:
            out: List[Dict[str, Any]] = []
            for e in engines:
                gpus = [[str(n), int(g)] for n, g in e.get("gpus", [])]
                uuids = list(e.get("gpu_uuids", [None] * len(gpus)))
                out.append(
                    {
                        "addr": str(e["addr"]),
                        "worker_type": str(e.get("worker_type", "regular")),
                        "engine_rank": int(e.get("engine_rank", -1)),
                        "gpus": gpus,
                        "gpu_uuids": uuids,
                    }
                )
            self._enqueue("topology", {"ts": float(time.time() if ts is None else ts), "engines": out}, urgent=True)

        self._guard(build)

    def trajectory_event(
        self,
        kind: str,
        sample_index: int = -1,
        group_index: int = -1,
        turn: int = -1,
        weight_version: Any = "",
        detail: Any = "",
        ts: Optional[float] = None,
    ) -> None:
        """One lifecycle event (kind: attempt_start, gen_start, gen_end, tool_start, tool_end, attempt_end)."""

        def build() -> None:
            if kind not in _TRAJECTORY_KINDS:
                self._warner.warn("traj-kind", "rlboard: unknown trajectory kind %r dropped", kind)
                return
            rec = {
                "ts": float(time.time() if ts is None else ts),
                "kind": kind,
                "sample_index": int(sample_index),
                "group_index": int(group_index),
                "turn": int(turn),
                "weight_version": "" if weight_version is None else str(weight_version),
                "detail": "" if detail is None else str(detail),
            }
            self._enqueue("trajectories", rec, urgent=False)

        self._guard(build)

    def record_request(
        self,
        rollout_id: int,
        meta_info: Mapping[str, Any],
        sample_index: Optional[int] = None,
        group_index: Optional[int] = None,
        engine: Optional[str] = None,
        start_ts: Optional[float] = None,
        evaluation: bool = False,
        ts: Optional[float] = None,
    ) -> None:
        """One SGLang call's timing (docs/formats.md §4.14): ``meta_info`` as SGLang returned it.

        Scalars (``e2e_latency``, ``queue_time``, ``prompt_tokens``, ``cached_tokens``, the
        ``pd_*`` fields, ...) and small flat dicts (``finish_reason``) are kept; lists (token
        log-probs) and non-finite numbers are left out. ``start_ts`` = when the call was sent.
        """

        def build() -> None:
            info: Dict[str, Any] = {}
            for k, v in (meta_info or {}).items():
                kept = _meta_value(v)
                if kept is not _SKIP:
                    info[str(k)] = kept
            rec = {
                "ts": float(time.time() if ts is None else ts),
                "rollout_id": int(rollout_id),
                "evaluation": bool(evaluation),
                "sample_index": None if sample_index is None else int(sample_index),
                "group_index": None if group_index is None else int(group_index),
                "engine": None if engine is None else str(engine),
                "start_ts": None if start_ts is None else float(start_ts),
                "meta_info": info,
            }
            self._enqueue("requests", rec, urgent=False)

        self._guard(build)

    def data_buffer(self, length: int, ts: Optional[float] = None) -> None:
        """Backlog of a buffered data source (pending sample groups)."""
        self._guard(
            lambda: self._enqueue("data_buffer", {"ts": float(time.time() if ts is None else ts), "length": int(length)}, urgent=False)
        )

    def meta(self, args: Mapping[str, Any], run_name: Optional[str] = None) -> None:
        """Replace meta.json's args snapshot (and optionally run_name); sent synchronously in the sender thread."""
        body: Dict[str, Any] = {"args": dict(args)}
        if run_name is not None:
            body["run_name"] = str(run_name)
        self._guard(lambda: self._put(("meta", body, True)))

    def record_args(self, namespace: Any, run_name: Optional[str] = None) -> None:
        """Replace meta.json's args with miles' curated snapshot of ``namespace`` (``args_snapshot``).

        ``run_name`` defaults to ``namespace.wandb_group`` when that is set (miles
        names the run after it); otherwise the collector keeps its run name.
        """

        def build() -> None:
            args = args_snapshot(namespace)
            name = run_name if run_name is not None else args.get("wandb_group")
            self.meta(args, run_name=None if name in (None, "") else str(name))

        self._guard(build)

    def set_router(self, url: str, mode: Optional[str] = None) -> None:
        """Point the collector's SGLang scraper at the router's new address (``http://ip:port``).

        ``mode`` ``"router"`` / ``"direct"`` switches the scraping mode; by default
        the collector keeps its mode (in direct mode the address is only recorded).
        Posted by the sender thread as soon as it is reached (like ``meta``).
        """

        def build() -> None:
            addr = str(url)
            body: Dict[str, Any] = {"url": addr if "://" in addr else "http://" + addr}
            if mode is not None:
                body["mode"] = str(mode)
            self._put(("router", body, True))

        self._guard(build)

    def register_procs(self, pids: Optional[Sequence[int]] = None, role: Optional[str] = None) -> None:
        """Register processes for the collector's host telemetry (``POST /v1/procs``).

        ``pids`` defaults to ``[os.getpid()]``, ``role`` to the client's role. The
        collector must run on this node with ``--host-telemetry`` (it answers 409
        otherwise, logged as a warning). Posted by the sender thread at once.
        """

        def build() -> None:
            ids = [int(p) for p in (pids if pids is not None else [os.getpid()])]
            self._put(("procs", {"pids": ids, "role": str(role if role is not None else self.role)}, True))

        self._guard(build)

    def timer_hook(self) -> TimerHook:
        return TimerHook(self)

    # ------------------------------------------------------------------ lifecycle

    def flush(self, timeout: float = 10.0) -> bool:
        """Send everything queued so far; True if it was handed over within ``timeout``. Never raises."""
        try:
            done = threading.Event()
            self._queue.put((_FLUSH, done, True), timeout=timeout)
            return done.wait(timeout)
        except Exception:  # noqa: BLE001
            return False

    def close(self, timeout: float = 10.0) -> None:
        """Flush and stop the sender thread. Further calls are ignored."""
        if self._closed:
            return
        self.flush(timeout)
        self._closed = True
        try:
            self._queue.put((_STOP, None, True), timeout=timeout)
            self._thread.join(timeout)
        except Exception:  # noqa: BLE001
            pass

    def __enter__(self) -> "RlboardClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ internals

    def _guard(self, fn: Callable[[], None]) -> None:
        try:
            if not self._closed:
                fn()
        except Exception as e:  # noqa: BLE001 - never raise into training
            self._warner.warn("producer", "rlboard: dropped a record: %r", e)

    def _phase_record(self, name: str, t0: float, t1: float) -> Dict[str, Any]:
        return {
            "name": str(name),
            "t0": float(t0),
            "t1": float(t1),
            "node": self.node,
            "gpus": list(self.gpus),
            "rank": -1 if self.role == "rollout_manager" else self.rank,
            "role": self.role,
        }

    def _enqueue(self, stream: str, rec: Dict[str, Any], urgent: bool) -> None:
        self._put((stream, rec, urgent))

    def _put(self, item: Tuple[Any, Any, bool]) -> None:
        try:
            self._queue.put_nowait(item)
            self._count("queued")
        except queue.Full:
            self._count("dropped")
            self._warner.warn("queue-full", "rlboard: client queue full, dropping records (collector slow or unreachable?)")

    def _count(self, key: str, n: int = 1) -> None:
        with self._stats_lock:
            self.stats[key] += n

    def _run(self) -> None:
        pending: Dict[str, List[Dict[str, Any]]] = {}
        count = 0
        last_send = time.monotonic()
        while True:
            wait = max(0.0, last_send + self._batch_max_seconds - time.monotonic()) if count else self._batch_max_seconds
            try:
                kind, payload, urgent = self._queue.get(timeout=wait)
            except queue.Empty:
                kind, payload, urgent = None, None, False
            try:
                if kind is _STOP:
                    self._send_all(pending)
                    return
                if kind is _FLUSH:
                    self._send_all(pending)
                    count, last_send = 0, time.monotonic()
                    payload.set()
                    continue
                if kind == "meta":
                    self._post("/v1/meta", payload, 1)
                elif kind == "router":
                    self._post("/v1/router", payload, 1)
                elif kind == "procs":
                    self._post("/v1/procs", payload, 1)
                elif kind is not None:
                    pending.setdefault(kind, []).append(payload)
                    count += 1
                if count and (urgent or count >= self._batch_max_events or time.monotonic() - last_send >= self._batch_max_seconds):
                    self._send_all(pending)
                    count, last_send = 0, time.monotonic()
            except Exception as e:  # noqa: BLE001 - the sender thread must survive anything
                pending, count = {}, 0
                self._warner.warn("sender", "rlboard: sender error: %r", e)

    def _send_all(self, pending: Dict[str, List[Dict[str, Any]]]) -> None:
        for stream in list(pending):
            records = pending.pop(stream)
            if records:
                self._post("/v1/" + _ROUTES[stream], {"records": records}, len(records))

    def _post(self, path: str, body: Dict[str, Any], n: int) -> None:
        url = self.url + path
        try:
            data = json.dumps(body, allow_nan=True).encode("ascii")
            req = urllib.request.Request(url, data=data, method="POST", headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=self._timeout) as resp:
                resp.read()
            self._count("sent", n)
        except urllib.error.HTTPError as e:
            detail = ""
            try:
                detail = e.read().decode("utf-8", "replace")
                parsed = json.loads(detail)
                accepted = int(parsed.get("accepted", 0))
                self._count("sent", accepted)
                self._count("rejected", n - accepted)
            except Exception:  # noqa: BLE001
                self._count("failed", n)
            self._warner.warn("http-" + path, "rlboard: POST %s -> HTTP %s %s", url, e.code, detail[:300])
        except Exception as e:  # noqa: BLE001 - network errors, timeouts, encoding
            self._count("failed", n)
            self._warner.warn("post-" + path, "rlboard: POST %s failed (%s); %d records dropped", url, e, n)
