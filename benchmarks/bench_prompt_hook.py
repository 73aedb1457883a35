"""Whole-process latency of the prompt-capture hook, run exactly as ``mission-memory hook install`` registers it.

Prints p50/p95/mean in milliseconds (variants interleaved round by round) for the installed hook command (a typical prompt, a prompt full
of secrets, a 10 KB prompt) next to ``python -S -c pass`` run with the same interpreter in the same
run, both executed directly and through ``/bin/sh -c`` (Claude Code runs hook commands through a
shell). Targets (issue #3): hook p50 <= 10 ms and p95 <= 15 ms.

With ``--parallel N`` it measures the hook under load instead (issue 22 item 9): ``--load-workers K``
busy-looping processes keep the cores saturated, then N hook commands start at once through
``/bin/sh -c`` with the installed ``--timeout-s`` (default 5), each watched by its own thread; a hook
still running at the timeout is killed, as Claude Code kills it. It prints each variant's wall-time
p50/p95/max (from just before its spawn), how many were killed, stored, counted as dropped and lost
uncounted (neither), and the load average.
``--compare-src DIR`` runs another checkout's hook (``DIR/src/mission_memory/hook/prompt_capture.py``)
in the same run, rounds alternating.

Usage::

    python benchmarks/bench_prompt_hook.py [--runs 200] [--tmp-parent DIR] [--other-src DIR]
    python benchmarks/bench_prompt_hook.py --parallel 100 --load-workers 20 [--rounds 3] [--compare-src DIR]

``--other-src`` also runs another checkout's hook (``DIR/mission_memory/hook/prompt_capture.py``, its
own data dir) interleaved with this one's, run directly, so a before/after comparison sees the same
background load; the median of the per-round differences is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from mission_memory.hook import installer

TYPICAL = "Please fix the failing test in tests/hook and explain the retry logic. Дякую, це терміново!"
SECRETS = (
    "Deploy with AKIAQ3EGRTUVWXYZ2345 and ghp_R4nd0mT0k3nV4lu3F0rT3st1ng0123456789, "
    "password=Tr0ub4dor&3horse, postgres://admin:hunter2hunter2@db/app <private>мій секрет</private>"
)
LARGE = ("Довгий опис задачі with English mixed in, line after line. " * 200)[:10_000]


def payload(prompt: str, cwd: str) -> bytes:
    return json.dumps(
        {
            "session_id": "bench-session",
            "transcript_path": "/tmp/transcript.jsonl",
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        },
        ensure_ascii=False,
    ).encode()


def measure(variants: dict[str, tuple[list[str], bytes, bool]], runs: int) -> dict[str, list[float]]:
    """Wall-clock milliseconds per variant ``name -> (argv, stdin, through_shell)``, ``runs`` each.

    Variants run interleaved (one of each per round, after 5 warm-up rounds), so background load
    hits all of them alike.
    """
    timings: dict[str, list[float]] = {name: [] for name in variants}
    for i in range(runs + 5):
        for name, (argv, stdin, shell) in variants.items():
            command: list[str] | str = shlex.join(argv) if shell else argv
            start = time.perf_counter()
            subprocess.run(command, input=stdin, shell=shell, check=True, stdout=subprocess.DEVNULL)
            if i >= 5:
                timings[name].append((time.perf_counter() - start) * 1000)
    return timings


def in_process(data_dir: Path, stdin: bytes, runs: int) -> list[float]:
    """Milliseconds of :func:`prompt_commit.capture` alone (parse, redact, four file writes): the hook's own work."""
    from mission_memory.capture import prompt_commit

    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        prompt_commit.capture(stdin, str(data_dir))
        timings.append((time.perf_counter() - start) * 1000)
    return timings


def summary(name: str, timings: list[float]) -> str:
    ordered = sorted(timings)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{name:<44} p50 {p50:6.2f} ms   p95 {p95:6.2f} ms   mean {statistics.fmean(ordered):6.2f} ms"


def _burn() -> None:  # pragma: no cover - runs in the load processes
    while True:
        pass


def parallel_round(command: str, data_dir: Path, prompts: int, timeout_s: float, cwd: str) -> dict[str, Any]:
    """Start ``prompts`` hook commands at once; kill each one still running at ``timeout_s``.

    Returns the wall seconds of each, how many were killed, how many prompts were stored (refs in
    the prompt repository) and counted as dropped (the dropped-prompt record's total), since the
    data dir was empty.
    """
    import threading

    from mission_memory.capture import dropped_prompts

    seconds: list[float] = []
    killed: list[int] = []
    lock = threading.Lock()

    def watch(hook: subprocess.Popen[bytes], start: float) -> None:
        """Wait for one hook as Claude Code does: kill it at the timeout."""
        try:
            hook.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            hook.kill()
            hook.wait()
            with lock:
                killed.append(1)
        with lock:
            seconds.append(time.monotonic() - start)

    watchers = []
    for i in range(prompts):
        start = time.monotonic()
        hook = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        watcher = threading.Thread(target=watch, args=(hook, start))
        watcher.start()
        assert hook.stdin is not None
        hook.stdin.write(payload(f"{TYPICAL} ({i})", cwd))
        hook.stdin.close()
        watchers.append(watcher)
    for watcher in watchers:
        watcher.join()
    repo = data_dir / "prompts.git"
    stored = subprocess.run(["git", "--git-dir", str(repo), "for-each-ref", "refs/prompts"], capture_output=True,
                            text=True, check=False).stdout.count("\n") if repo.exists() else 0
    record = dropped_prompts.read_record(str(data_dir))
    return {"seconds": seconds, "killed": len(killed), "stored": stored, "counted": record.total if record else 0}


def parallel_main(args: argparse.Namespace) -> None:
    """``--parallel``: the hook under load, this checkout (and ``--compare-src``) in one run."""
    import multiprocessing

    interpreter = str(installer.hook_interpreter())
    variants = {"this checkout": None}
    if args.compare_src is not None:
        root = args.compare_src / "src" if (args.compare_src / "src").is_dir() else args.compare_src
        variants["compare-src"] = root / "mission_memory" / "hook" / "prompt_capture.py"
    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(args.load_workers)]
    for burner in burners:
        burner.start()
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
    loads = []
    try:
        time.sleep(args.warmup_s)
        for _ in range(args.rounds):
            for name, script in variants.items():
                with tempfile.TemporaryDirectory(prefix="mission-memory-bench-", dir=args.tmp_parent) as tmp:
                    data_dir = Path(tmp) / "data"
                    if script is None:
                        command = installer.prompt_hook_command(data_dir, args.timeout_s)
                    else:
                        command = shlex.join([interpreter, "-S", "-E", str(script), "--data-dir", str(data_dir)])
                    loads.append(os.getloadavg()[0])
                    results[name].append(parallel_round(command, data_dir, args.parallel, args.timeout_s,
                                                        str(Path.cwd())))
    finally:
        for burner in burners:
            burner.terminate()
    print(f"{args.parallel} parallel prompts per round, {args.rounds} rounds, {args.load_workers} load workers, "
          f"timeout {args.timeout_s} s, cpus {os.cpu_count()}, load average at round start "
          f"{min(loads):.1f}..{max(loads):.1f}")
    for name, rounds in results.items():
        seconds = sorted(t for r in rounds for t in r["seconds"])
        total = len(seconds)
        p50 = statistics.median(seconds)
        p95 = seconds[min(total - 1, round(0.95 * (total - 1)))]
        killed = sum(r["killed"] for r in rounds)
        stored = sum(r["stored"] for r in rounds)
        counted = sum(r["counted"] for r in rounds)
        lost = total - stored - counted
        print(f"{name:<14} wall p50 {p50:5.2f} s  p95 {p95:5.2f} s  max {seconds[-1]:5.2f} s   over the timeout "
              f"(killed) {killed}/{total}   stored {stored}   counted as dropped {counted}   lost uncounted {lost}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--parallel", type=int, default=0, help="hooks started at once (0: the latency benchmark)")
    parser.add_argument("--load-workers", type=int, default=0, help="busy-looping processes during --parallel")
    parser.add_argument("--rounds", type=int, default=3, help="--parallel rounds per variant")
    parser.add_argument("--timeout-s", type=int, default=installer.PROMPT_HOOK_TIMEOUT_S)
    parser.add_argument("--warmup-s", type=float, default=5.0, help="load before the first round (s)")
    parser.add_argument("--compare-src", type=Path, help="another checkout (DIR or DIR/src) measured alike")
    parser.add_argument(
        "--tmp-parent",
        type=Path,
        default=installer.default_data_dir().parent,
        help="where the throw-away data dir is made (default: next to the real data dir, since file creation "
        "speed differs between file systems; /tmp on some machines is several times slower)",
    )
    parser.add_argument("--other-src", type=Path, help="also run the hook of this src/ folder, interleaved")
    args = parser.parse_args()
    args.tmp_parent.mkdir(parents=True, exist_ok=True)
    if args.parallel:
        parallel_main(args)
        return
    with tempfile.TemporaryDirectory(prefix="mission-memory-bench-", dir=args.tmp_parent) as tmp:
        data_dir = Path(tmp) / "data"
        hook = shlex.split(installer.prompt_hook_command(data_dir))
        baseline = [str(installer.hook_interpreter()), "-S", "-c", "pass"]
        cwd = str(Path.cwd())
        print(f"interpreter: {hook[0]}")
        print(f"hook command: {shlex.join(hook)}")
        print(f"runs per row: {args.runs}, cpus: {os.cpu_count()}")
        variants: dict[str, tuple[list[str], bytes, bool]] = {}
        for shell in (False, True):
            how = "sh -c" if shell else "exec"
            variants[f"python -S -c pass [{how}]"] = (baseline, b"", shell)
            for name, prompt in (("typical", TYPICAL), ("secrets", SECRETS), ("10 KB", LARGE)):
                variants[f"hook, {name} prompt [{how}]"] = (hook, payload(prompt, cwd), shell)
        if args.other_src:
            other = [hook[0], "-S", "-E", str(args.other_src / "mission_memory" / "hook" / "prompt_capture.py"),
                     "--data-dir", str(Path(tmp) / "other-data")]
            print(f"other hook command: {shlex.join(other)}")
            for name, prompt in (("typical", TYPICAL), ("secrets", SECRETS), ("10 KB", LARGE)):
                variants[f"other hook, {name} prompt [exec]"] = (other, payload(prompt, cwd), False)
        print("-- whole process (exec: run directly; sh -c: through a shell, as Claude Code runs hooks)")
        measured = measure(variants, args.runs)
        for name, timings in measured.items():
            print(summary(name, timings))
        if args.other_src:
            print("-- this hook minus the other, per round (median, p95 of the paired differences)")
            for name in ("typical", "secrets", "10 KB"):
                pairs = sorted(a - b for a, b in zip(measured[f"hook, {name} prompt [exec]"],
                                                     measured[f"other hook, {name} prompt [exec]"], strict=True))
                p95 = pairs[min(len(pairs) - 1, round(0.95 * (len(pairs) - 1)))]
                print(f"{name + ' prompt':<44} median {statistics.median(pairs):+6.2f} ms   p95 {p95:+6.2f} ms")
        work_dir = Path(tmp) / "in-process"
        print("-- in process (no interpreter start-up): where the hook's own time goes")
        print(summary("capture(), typical prompt", in_process(work_dir, payload(TYPICAL, cwd), args.runs)))
        print(f"{'':<44} (file creation speed of {args.tmp_parent} dominates this row)")
        refs = subprocess.run(
            ["git", "--git-dir", str(data_dir / "prompts.git"), "for-each-ref", "refs/prompts"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.count("\n")
        print(f"prompts stored: {refs} (expected {2 * 3 * (args.runs + 5)})")


if __name__ == "__main__":
    main()
