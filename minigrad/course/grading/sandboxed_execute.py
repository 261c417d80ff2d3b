"""`nbgrader autograde`'s execution step, with each submission's kernel in a sandbox.

nbgrader runs a submission's notebook in a kernel started as the instructor, in the course
folder, where the autograded copy of the notebook already holds every check's hidden tests.
Here the kernel starts inside sandbox.py's sandbox instead, in a fresh folder holding a copy
of the submission with the hidden tests taken out, and is reached over Unix sockets in that
folder (the sandbox has no network). The grader, nbgrader's own process, stays outside.

Hidden tests are not part of the run the student's outputs come from. Each check cell runs
without them; once the student's last cell has run, each exercise whose visible check
passed gets its hidden tests, quietly (their printout is discarded, nothing is kept in the
kernel's history), on the answer as it was right after its check cell. Their verdict comes
back as the kernel's reply: an error there is added to the check cell, so nbgrader scores
it 0 and the feedback shows the check's message. Hidden tests that kill the kernel fail
that exercise only: a new kernel runs the cells again before the next exercise's tests.
"""

from __future__ import annotations

import ast
import copy
import os
import shutil
import time
from pathlib import Path
from typing import Any

from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbclient.util import run_sync
from nbformat import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Bool, Integer

from minigrad.course.exercise_cells import BEGIN_HIDDEN, END_HIDDEN
from minigrad.course.grading import sandbox

# Output a cell may send before the rest is dropped (characters of text and data).
MAX_CELL_OUTPUT = 20_000_000
MAX_RESTARTS = 5  # kernels a submission may use up before its remaining cells are skipped
MAX_VERDICT = 1_000  # characters of a hidden test's message kept for the feedback
ANSWERS = "__minigrad_grading_answers__"


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel started inside the sandbox, reached over Unix sockets in its folder."""

    def __init__(self, *, workdir: Path, mode: str, limits: sandbox.Limits,
                 slot: sandbox.Slot | None, hidden: list[Path], **kwargs: Any) -> None:
        # Fresh socket paths for each kernel: a predecessor never shares them.
        super().__init__(transport="ipc", ip=str(workdir / "kernel"), cache_ports=False,
                         **kwargs)
        self.connection_file = str(workdir / "kernel.json")
        self._sandbox = (workdir, mode, limits, slot, hidden)

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        workdir, mode, limits, slot, hidden = self._sandbox
        if slot is not None and os.geteuid() == 0:
            os.chown(self.connection_file, slot.uid, slot.uid)  # the kernel reads its key
        argv = super().format_kernel_cmd(extra_arguments)
        return sandbox.sandboxed(argv, workdir, mode, limits, slot, hidden)

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
        # What the kernel writes to its own stdout and stderr (not the notebook's outputs)
        # goes to a log in the grader's folder, not to the instructor's terminal.
        self._log = open(self._sandbox[0].with_suffix(".log"), "ab")  # noqa: SIM115
        kw.update(stdout=self._log, stderr=self._log)
        await super()._async_launch_kernel(kernel_cmd, **kw)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        # Whatever the kernel left (forked children) is gone before a successor starts.
        slot = self._sandbox[3]
        if slot is not None:
            sandbox.kill_all(slot)
        await super()._async_cleanup_resources(restart=restart)

    async def _async_interrupt_kernel(self) -> None:
        # The kernel leads a session of its own inside the sandbox, out of reach of the
        # grader's signals: it is asked to interrupt itself, over its control socket.
        if self._sandbox[1] == "unsafe":
            await super()._async_interrupt_kernel()
            return
        message = self.session.msg("interrupt_request", content={})
        self._connect_control_socket()
        self.session.send(self._control_socket, message)

    interrupt_kernel = _async_interrupt_kernel


class SandboxedExecute(Execute):
    """nbgrader's Execute with the kernel in a sandbox and hidden tests run last (see the
    module's docstring)."""

    unsafe = Bool(
        False, help="Run submissions without a sandbox, as the instructor (not recommended)."
    ).tag(config=True)
    cpu_seconds = Integer(sandbox.Limits.cpu_s, help="CPU seconds per submission.").tag(
        config=True
    )
    memory_mb = Integer(sandbox.Limits.memory_bytes // 2**20,
                        help="Address space per kernel, in MiB.").tag(config=True)
    max_processes = Integer(sandbox.Limits.processes,
                            help="Processes and threads per kernel.").tag(config=True)
    submission_timeout = Integer(
        900, help="Wall-clock seconds per submission; cells after it are not run."
    ).tag(config=True)
    tmp_mb = Integer(sandbox.Limits.tmp_bytes // 2**20,
                     help="Size of the sandbox's /tmp and of its /dev/shm (both in memory), "
                          "in MiB each.").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict, km: Any = None) -> tuple:
        mode = sandbox.isolation(self.unsafe or os.environ.get("MINIGRAD_UNSAFE_GRADING") == "1")
        slot = sandbox.Slot() if mode == "bwrap" else None
        workdir = sandbox.make_workdir(slot)
        self._hidden_jobs: list[tuple[int, str, str]] = []
        self._output_sizes: dict[int, int] = {}
        self._deadline = time.monotonic() + self.submission_timeout
        self._restarts = 0
        try:
            self._copy_submission(nb, resources, workdir, slot)
            self._kernel_options = {
                "workdir": workdir, "mode": mode, "slot": slot,
                "limits": sandbox.Limits(cpu_s=self.cpu_seconds,
                                         memory_bytes=self.memory_mb * 2**20,
                                         processes=self.max_processes,
                                         tmp_bytes=self.tmp_mb * 2**20),
                "hidden": _course_folders(resources),
            }
            return self._run(nb, resources)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
            workdir.with_suffix(".log").unlink(missing_ok=True)
            if slot is not None:
                slot.release()

    def _run(self, nb: NotebookNode, resources: dict) -> tuple:
        """nbconvert's ExecutePreprocessor.preprocess, with the hidden tests after the last cell."""
        NotebookClient.__init__(self, nb, None)
        self.reset_execution_trackers()
        self._check_assign_resources(resources)
        with self.setup_kernel():
            info = self.wait_for_reply(self.kc.kernel_info())
            self.nb.metadata["language_info"] = info["content"]["language_info"]
            for index, cell in enumerate(self.nb.cells):
                self.preprocess_cell(cell, resources, index)
            self._run_hidden_tests()
        return self.nb, self.resources

    def create_kernel_manager(self) -> SandboxedKernelManager:
        if not self.kernel_name:
            self.kernel_name = self.nb.metadata.get("kernelspec", {}).get("name") or "python3"
        self.km = SandboxedKernelManager(kernel_name=self.kernel_name, config=self.config,
                                         **self._kernel_options)
        return self.km

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int) -> tuple:
        if cell.cell_type != "code":
            return cell, resources
        if BEGIN_HIDDEN not in cell.source:
            self._execute(cell, index)
            return cell, resources
        full = cell.source
        visible, hidden = _split_hidden(full)
        cell.source = visible
        try:
            self._execute(cell, index)
        finally:
            cell.source = full
        if not any(output.output_type == "error" for output in cell.outputs):
            exercise = cell.metadata.get("nbgrader", {}).get("grade_id", f"cell {index}")
            if self._capture_answers(exercise, hidden):
                self._hidden_jobs.append((index, exercise, hidden))
        return cell, resources

    def _execute(self, cell: NotebookNode, index: int) -> None:
        """Run one cell. A kernel that dies, garbles its messages or stops answering gets
        a successor (the cells above run again in it), and grading goes on after the cell."""
        if time.monotonic() > self._deadline:
            cell.outputs = [_error("NotRun", f"this cell was not run: the submission used its "
                                   f"whole time of {self.submission_timeout} s "
                                   "(c.SandboxedExecute.submission_timeout).")]
            return
        try:
            self.execute_cell(cell, index, store_history=True)
        except (DeadKernelError, ValueError, RuntimeError, TimeoutError):
            # ValueError: messages signed with a dead kernel's key; RuntimeError: its
            # channels closed under the client.
            cell.outputs.append(_dead_kernel_output())
            self._restart_before(index)
            return
        timed_out = any(output.get("ename") == "CellTimeoutError" for output in cell.outputs)
        if timed_out and not self._answers():
            cell.outputs.append(_error("KernelStuck", "the kernel stopped answering after this "
                                       "cell (it may have used up its processes or threads), "
                                       "so a new one ran the cells above again and grading "
                                       "went on."))
            self._restart_before(index)

    def _answers(self, seconds: float = 10.0) -> bool:
        """Whether the kernel still replies to a kernel_info request within `seconds`."""
        try:
            message_id = self.kc.kernel_info()
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                reply = run_sync(self.kc.get_shell_msg)(timeout=deadline - time.monotonic())
                if reply["parent_header"].get("msg_id") == message_id:
                    return True
        except Exception:  # noqa: BLE001 - any failure to answer means it does not answer
            return False
        return False

    def _restart_before(self, index: int) -> None:
        """A new kernel, with the cells before `index` run again in it (into copies: their
        outputs stay those of the first run): check cells without their hidden tests, and the
        answers their hidden tests will receive taken again from the new kernel."""
        self._new_kernel()
        originals = list(self.nb.cells[:index])
        waiting = {exercise for _, exercise, _ in self._hidden_jobs}
        for position, earlier in enumerate(originals):
            if earlier.cell_type != "code":
                continue
            again = copy.deepcopy(earlier)
            visible, hidden = _split_hidden(again.source)
            again.source = visible
            try:
                self.execute_cell(again, position, store_history=False)
            except (DeadKernelError, ValueError, RuntimeError, TimeoutError):
                # a cell that kills it every time: skipped, as the first time
                self._new_kernel()
                continue
            exercise = earlier.metadata.get("nbgrader", {}).get("grade_id")
            if hidden and exercise in waiting:
                self._capture_answers(exercise, hidden)
        self.nb.cells[:index] = originals

    def _new_kernel(self) -> None:
        self._restarts += 1
        if self._restarts > MAX_RESTARTS:
            self._deadline = 0.0  # the remaining cells are marked as not run
            return
        run_sync(self.km.restart_kernel)(now=True)
        self.kc.stop_channels()
        self.start_new_kernel_client()

    def output(self, outs: list, msg: dict, display_id: str, cell_index: int) -> Any:
        """nbclient's output handling, dropping what a cell sends past MAX_CELL_OUTPUT."""
        size = len(str(msg.get("content", {}).get("text", ""))) + len(
            str(msg.get("content", {}).get("data", ""))
        )
        total = self._output_sizes.get(cell_index, 0) + size
        self._output_sizes[cell_index] = total
        if total > MAX_CELL_OUTPUT:
            if total - size <= MAX_CELL_OUTPUT:
                note = f"\n... output past {MAX_CELL_OUTPUT:,} characters dropped when graded ...\n"
                outs.append(NotebookNode(output_type="stream", name="stderr", text=note))
            return None
        return super().output(outs, msg, display_id, cell_index)

    def _capture_answers(self, exercise: str, hidden: str) -> bool:
        """Keep the names the hidden tests receive, as they are now, for the hidden run."""
        names = _answer_names(hidden)
        pairs = ", ".join(f"{name!r}: {name}" for name in names)
        code = f"globals().setdefault({ANSWERS!r}, {{}})[{exercise!r}] = {{{pairs}}}"
        reply = self._quietly(code)
        return reply is not None and reply.get("status") == "ok"

    def _run_hidden_tests(self) -> None:
        for position, (index, exercise, hidden) in enumerate(self._hidden_jobs):
            code = (
                f"exec(compile({hidden!r}, '<hidden tests>', 'exec'),"
                f" {{**globals(), **globals()[{ANSWERS!r}][{exercise!r}]}})"
            )
            reply = self._quietly(code)
            if reply is None:
                self._fail(index, "HiddenTestsDidNotFinish",
                           "the hidden tests of this exercise did not finish (the kernel died "
                           "or ran past the time limit), so they count as failed.")
                self._replace_dead_kernel(self._hidden_jobs[position + 1:])
            elif reply.get("status") != "ok":
                ename = str(reply.get("ename", "Error"))[:100]
                evalue = str(reply.get("evalue", ""))[:MAX_VERDICT]
                if ename == "KeyError" and ANSWERS in evalue:  # a new kernel never got them
                    ename, evalue = "HiddenTestsDidNotFinish", (
                        "the hidden tests of this exercise did not run: the kernel that held "
                        "the answer died, and a new one could not run the cells up to this "
                        "check again, so they count as failed.")
                self._fail(index, ename, evalue)

    def _replace_dead_kernel(self, remaining: list[tuple[int, str, str]]) -> None:
        """After hidden tests that killed the kernel (or left it stuck): a new kernel with the
        cells run again up to the last check whose hidden tests are still to run, and the
        answers taken again, so that those still run; within the submission's time and
        MAX_RESTARTS."""
        if not remaining or self._answers() or self._restarts >= MAX_RESTARTS:
            return
        if time.monotonic() > self._deadline:
            return
        self._restart_before(max(index for index, _, _ in remaining) + 1)

    def _quietly(self, code: str) -> dict | None:
        """Run `code` in the kernel without history or output; its reply, or None when the
        kernel died or did not answer in time."""
        try:
            message_id = self.kc.execute(code, silent=True, store_history=False,
                                         allow_stdin=False)
            reply = self.wait_for_reply(message_id)
        except (DeadKernelError, TimeoutError, RuntimeError):
            return None
        if reply is None:
            return None
        return reply["content"]

    def _fail(self, index: int, ename: str, evalue: str) -> None:
        self.nb.cells[index].outputs.append(_error(ename, evalue))

    def _copy_submission(self, nb: NotebookNode, resources: dict, workdir: Path,
                         slot: sandbox.Slot | None) -> None:
        """The submission's files and its notebook, without hidden tests, into `workdir`."""
        import nbformat

        source = Path(resources.get("metadata", {}).get("path") or ".")
        for path in source.rglob("*"):
            if path.is_file() and path.suffix != ".ipynb" and not path.is_symlink():
                target = workdir / path.relative_to(source)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
        copy = nbformat.from_dict(nb)
        for cell in copy.cells:
            if cell.cell_type == "code" and BEGIN_HIDDEN in cell.source:
                cell.source = _split_hidden(cell.source)[0]
        name = resources.get("unique_key", "submission")
        nbformat.write(copy, workdir / f"{name}.ipynb")
        if slot is not None and os.geteuid() == 0:
            for path in [workdir, *workdir.rglob("*")]:
                os.chown(path, slot.uid, slot.uid)


def _dead_kernel_output() -> NotebookNode:
    return _error("KernelDied", "the Python kernel died while running this cell (os._exit, a "
                  "crash, or running out of memory), so it has no result. Grading went on in "
                  "a new kernel after running the cells above again.")


def _error(ename: str, evalue: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=evalue,
                        traceback=[f"{ename}: {evalue}"])


def _split_hidden(source: str) -> tuple[str, str]:
    """(the cell without its hidden tests, the hidden tests' code)."""
    visible, hidden, inside = [], [], False
    for line in source.splitlines():
        marker = line.strip()
        if marker == BEGIN_HIDDEN:
            inside = True
        elif marker == END_HIDDEN:
            inside = False
        elif inside:
            hidden.append(line)
        else:
            visible.append(line)
    return "\n".join(visible), "\n".join(hidden)


def _answer_names(hidden: str) -> list[str]:
    """The names passed to `grading.run_hidden(exercise, tests, *answers)` in `hidden`."""
    names: list[str] = []
    try:
        tree = ast.parse(hidden)
    except SyntaxError:
        return names
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "run_hidden"):
            names += [arg.id for arg in node.args[2:] if isinstance(arg, ast.Name)]
    return names


def _course_folders(resources: dict) -> list[Path]:
    """The folders no sandbox may see even if they lie inside the runtime: the course folder
    (this notebook's autograded/STUDENT/ASSIGNMENT is three levels below it)."""
    path = Path(resources.get("metadata", {}).get("path") or ".").resolve()
    course = path.parents[2] if len(path.parents) >= 3 else path
    return [course]
