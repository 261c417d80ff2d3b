"""Where a submission's code runs while it is graded: a sandbox that sees only its own copy.

A student's notebook is ordinary Python, so whatever process runs it can do what that
process can: read the course folder (solutions, hidden tests, the gradebook), signal the
grader, use the network. Each submission's kernel therefore starts inside bubblewrap
(`bwrap`, the sandbox Flatpak uses; no daemon), with

- a file system of its own: the Python runtime and the minigrad package read-only, a
  private /tmp, and one writable folder holding a copy of the submission; nothing else of
  the machine (not the course folder, the exchange, other submissions or home folders);
- its own process, network, IPC and host-name namespaces: it cannot see or signal the
  grader, and has no network (not even the machine's loopback);
- a user of its own: run as root, the kernel runs as an unprivileged uid (one per
  grading slot, so a fork bomb in one submission does not starve the others); run as
  an ordinary user, in a user namespace as that user;
- resource limits (rlimits, through `prlimit`): CPU seconds, address space, processes,
  file size, open files, no core dumps; and a size for its private /tmp and /dev/shm, which
  live in memory (bwrap 0.8 and later: a tmpfs's pages count against no rlimit, so without
  it one submission could fill the machine's memory with files).

Without bwrap the course refuses to autograde, saying how to install it, unless the
instructor asks for `unsafe` grading (the kernel then runs as the grader, as nbgrader
does by default).
"""

from __future__ import annotations

import fcntl
import functools
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# The uids a root grader gives its sandboxes, one per concurrent grading slot.
FIRST_UID = 61000
SLOTS = 64
SLOT_LOCKS = Path(tempfile.gettempdir()) / f"minigrad-grading-slots-{os.getuid()}"

# What a kernel may inherit from the grader's environment; nothing else (a hub's API
# token, say) reaches student code.
PASSED_ENVIRONMENT = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "PYTHONHASHSEED",
                      "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                      "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
PASSED_PREFIXES = ("NUMBA_",)

HOW_TO_ENABLE = (
    "Install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: "
    "`sudo dnf install bubblewrap`), or grade in the course's grading image "
    "(site/teaching.md, 'Teaching a class'). To grade without isolation anyway, knowing "
    "that every submission then runs as you and can read and change the course folder, "
    "pass --unsafe to `make grade` or set `c.SandboxedExecute.unsafe = True` in "
    "nbgrader_config.py."
)


class SandboxUnavailableError(RuntimeError):
    """No way to isolate a submission here; the message says how to get one."""


@dataclass(frozen=True)
class Limits:
    """Per-kernel resource limits (rlimits): CPU seconds for the whole notebook, bytes of
    address space, processes and threads, bytes per written file, open files; and the size
    of each of the sandbox's in-memory folders, /tmp and /dev/shm."""

    cpu_s: int = 900
    memory_bytes: int = 6 * 2**30
    processes: int = 256
    file_bytes: int = 256 * 2**20
    open_files: int = 1024
    tmp_bytes: int = 2**30


def isolation(unsafe: bool = False) -> str:
    """'bwrap' when bubblewrap works here, 'unsafe' when asked for; otherwise raise
    SandboxUnavailableError naming how to enable one."""
    if unsafe:
        return "unsafe"
    problem = _bwrap_problem()
    if problem is None:
        return "bwrap"
    raise SandboxUnavailableError(
        f"minigrad will not autograde without isolating each submission, and {problem}. "
        + HOW_TO_ENABLE
    )


def _bwrap_problem() -> str | None:
    """Why bwrap cannot sandbox a process here, or None when it can."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (`bwrap`) is not installed"
    probe = [bwrap, "--unshare-all", "--die-with-parent", *_system_binds(), "--proc", "/proc",
             "--dev", "/dev", "--", "/bin/true"]
    done = subprocess.run(probe, capture_output=True, text=True)
    if done.returncode != 0:
        return (f"bwrap cannot create namespaces here ({done.stderr.strip() or done.returncode};"
                " a container may forbid user namespaces)")
    return None


class Slot:
    """One of SLOTS grading slots, held (with a file lock) while a kernel runs; a root
    grader gives each slot its own uid."""

    def __init__(self) -> None:
        SLOT_LOCKS.mkdir(mode=0o700, exist_ok=True)
        for number in range(SLOTS):
            handle = open(SLOT_LOCKS / f"{number}.lock", "w")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                continue
            self.number, self._handle = number, handle
            return
        raise SandboxUnavailableError(f"all {SLOTS} grading slots are in use; grade fewer at once.")

    @property
    def uid(self) -> int:
        return FIRST_UID + self.number

    def release(self) -> None:
        kill_all(self)
        self._handle.close()


def kill_all(slot: Slot, wait_s: float = 5.0) -> None:
    """As root, end every process of the slot's uid (a kernel's forked children included)
    and wait until they are gone, so they no longer count against the next kernel's limits."""
    if os.geteuid() != 0:
        return  # the sandbox's process namespace ends with it
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        alive = _pids_of(slot.uid)
        if not alive:
            return
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                continue
        time.sleep(0.05)


def make_workdir(slot: Slot | None) -> Path:
    """A fresh private folder for one submission's copy, writable by its sandbox's user."""
    workdir = Path(tempfile.mkdtemp(prefix="minigrad-grade-"))
    if slot is not None and os.geteuid() == 0:
        os.chown(workdir, slot.uid, slot.uid)
    return workdir


def sandboxed(argv: list[str], workdir: Path, mode: str, limits: Limits,
              slot: Slot | None, hidden: list[Path]) -> list[str]:
    """The command line that runs `argv` inside the sandbox, in `workdir`; `hidden` are
    folders (the course, the exchange) covered by an empty one should they lie inside the
    runtime."""
    if mode == "unsafe":
        return argv
    rlimits = [
        f"--cpu={limits.cpu_s}", f"--as={limits.memory_bytes}", f"--fsize={limits.file_bytes}",
        f"--nofile={limits.open_files}", "--core=0",
    ]
    as_root = os.geteuid() == 0
    if as_root and slot is None:
        raise ValueError("a root grader runs each sandbox as its slot's uid: pass a Slot")
    if as_root:
        rlimits.append(f"--nproc={limits.processes}")
    else:  # the count is per real user, who is also running a desktop, a server...
        rlimits.append(f"--nproc={_processes_of(os.getuid()) + limits.processes}")
    # As root, no user namespace: the kernel gets a real uid of its own (setpriv, below).
    namespaces = (["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                   "--unshare-cgroup-try"] if as_root else ["--unshare-all"])
    size = ["--size", str(limits.tmp_bytes)] if _bwrap_sizes_tmpfs() else []
    command = ["prlimit", *rlimits, "--", "bwrap", *namespaces, "--die-with-parent",
               "--new-session", *_system_binds(),
               "--proc", "/proc", "--dev", "/dev", "--perms", "1777", *size, "--tmpfs", "/tmp",
               "--perms", "1777", *size, "--tmpfs", "/dev/shm"]
    made: set[Path] = set()
    for path in _runtime_paths():
        # Folders above a bound one are made open (the real /root is private, say).
        for parent in reversed(path.parents[:-1]):
            if parent not in made:
                command += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        command += ["--ro-bind", str(path), str(path)]
    for path in hidden:
        if any(_inside(path, runtime) for runtime in _runtime_paths()):
            command += ["--tmpfs", str(path)]
    command += [
        "--bind", str(workdir), str(workdir), "--chdir", str(workdir),
        "--clearenv", *_environment(workdir),
    ]
    if as_root:
        # bwrap as root keeps root's uid; setpriv drops it for good before Python starts.
        command += ["--", "setpriv", f"--reuid={slot.uid}", f"--regid={slot.uid}",
                    "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
                    "--no-new-privs"]
    else:
        command += ["--cap-drop", "ALL", "--"]
    return command + argv


@functools.lru_cache(maxsize=1)
def _bwrap_sizes_tmpfs() -> bool:
    """Whether this bwrap can cap a tmpfs's size (`--size`, bubblewrap 0.8 and later)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False
    done = subprocess.run([bwrap, "--help"], capture_output=True, text=True)
    return "--size" in done.stdout + done.stderr


def _system_binds() -> list[str]:
    """The operating system, read-only: /usr, /etc, and /bin, /lib... as they are (links
    into /usr on most systems)."""
    binds = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64"):
        path = Path("/") / name
        if path.is_symlink():
            binds += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            binds += ["--ro-bind", str(path), str(path)]
    return binds


def _runtime_paths() -> list[Path]:
    """Python and minigrad: the interpreter's prefixes and the package's own folders (an
    editable install points at the repository's minigrad/ and kernels/, never at the rest
    of the repository, whose lessons hold the hidden tests)."""
    paths = [Path(sys.base_prefix), Path(sys.prefix)]
    for package in ("minigrad", "minigrad.kernels"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            paths += [Path(location) for location in spec.submodule_search_locations]
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and Path(entry).is_dir():
            paths.append(Path(entry))
    kept: list[Path] = []
    for path in sorted({path.resolve() for path in paths}, key=lambda p: len(p.parts)):
        if str(path).startswith("/usr/") or path == Path("/usr"):
            continue  # already there
        if not any(_inside(path, outer) for outer in kept):
            kept.append(path)
    return kept


def _inside(path: Path, folder: Path) -> bool:
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def _environment(workdir: Path) -> list[str]:
    scripts = str(Path(sys.executable).parent)
    values = {
        "PATH": f"{scripts}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "NUMBA_CACHE_DIR": "/tmp/numba",
        "IPYTHONDIR": "/tmp/ipython",
        "JUPYTER_RUNTIME_DIR": str(workdir),
        "JUPYTER_DATA_DIR": "/tmp/jupyter",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if os.environ.get("PYTHONPATH"):
        values["PYTHONPATH"] = os.environ["PYTHONPATH"]
    for name, value in os.environ.items():
        if name in PASSED_ENVIRONMENT or name.startswith(PASSED_PREFIXES):
            values[name] = value
    setenv = []
    for name, value in values.items():
        setenv += ["--setenv", name, value]
    return setenv


def _pids_of(uid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _processes_of(uid: int) -> int:
    """How many processes and threads `uid` runs now (what RLIMIT_NPROC counts)."""
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(entry / "task"))
            except OSError:
                continue
    return count
