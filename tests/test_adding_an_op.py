"""The course website's "Adding an op" page (site/adding-an-op.md), followed step by step on
a copy of the package: a toy op, `cube`, is added the way the page says, and then works as
every built-in op does.

The register block is taken from the page itself (with sin renamed), so the page cannot
drift from what the op table accepts."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "site" / "adding-an-op.md").read_text()

FUNCTION = '''"""A toy op added by following site/adding-an-op.md."""

from __future__ import annotations

from typing import Any

from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.ops.table import register


class Cube(Function):
    """y = x ** 3;  dy/dx = 3 x ** 2."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Variable) -> Any:
        ctx.save_for_backward(x)
        return x.data**3

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> Variable:
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x


'''

CHECKS = r'''
import numpy as np
import minigrad
from minigrad.core import variable

x = minigrad.tensor([0.5, -1.0, 2.0], dtype=minigrad.float64, requires_grad=True)
assert np.allclose(x.cube().data, x.data**3)            # the method
assert np.allclose(minigrad.cube(x).data, x.data**3)    # the top-level function
assert minigrad.ops.Cube is minigrad.ops.toy.Cube       # the re-export
x.cube().sum().backward()
assert np.allclose(x.grad.data, 3 * x.data**2)
assert minigrad.autograd.gradcheck(lambda v: v.cube(), (x,))
assert minigrad.autograd.gradgradcheck(lambda v: v.cube(), (x,))
y = minigrad.tensor([2.0, 3.0])
y.cube_()                                               # the in-place variant
assert y.tolist() == [8.0, 27.0]
out = minigrad.empty(3, dtype=minigrad.float64)
minigrad.cube(x.detach(), out=out)                      # out=, from ops/tooling/arguments.py
assert np.allclose(out.data, x.data**3)
try:
    minigrad.cube("three")
except TypeError as error:                              # the argument check names it
    assert "cube" in str(error) and "str" in str(error), error
else:
    raise AssertionError("minigrad.cube('three') did not raise TypeError")
step = minigrad.compile(lambda v: (v.cube() * 2).sum())  # a replay without a rule
v = minigrad.tensor([1.0, 2.0])
assert [step(v).item() for _ in range(3)] == [18.0] * 3
stub = open(variable.__file__.replace(".py", ".pyi")).read()
assert "def cube(self" in stub and "def cube_(self" in stub   # make stubs ran
print("ok")
'''


def _section() -> str:
    return PAGE[PAGE.index("## The steps"):]


def test_the_page_names_every_place_an_op_touches():
    section = _section()
    for place in ("register(", "ops/__init__.py", "ops/tooling/arguments.py", "make stubs",
                  "compiler/rules.py", "gradcheck", "cuda"):
        assert place in section, place


def test_a_toy_op_added_by_following_the_page_works_everywhere(tmp_path: Path):
    copy = tmp_path / "minigrad"
    no_caches = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "minigrad", copy, ignore=no_caches)
    shutil.copytree(ROOT / "kernels", copy / "kernels", ignore=no_caches)

    # Steps 1 and 2: the Function, then the register block exactly as the page writes it.
    block = re.search(r"```python\n(.*?)```", _section(), re.S).group(1)
    block = "\n".join(line[3:] if line.startswith("   ") else line for line in block.splitlines())
    assert block.startswith('@register("sin", inplace=True)'), block
    registration = block.replace('"sin"', '"cube"').replace("def sin", "def cube")
    (copy / "ops" / "toy.py").write_text(FUNCTION + registration.replace("Sin.apply", "Cube.apply"))

    # Step 2: the module is imported in ops/__init__.py, its Function joins the imports
    # and __all__.
    init = (copy / "ops" / "__init__.py").read_text()
    init = init.replace("    triangle,\n", "    toy,\n    triangle,\n", 1)
    triangle = "from minigrad.ops.triangle import ("
    init = init.replace(triangle, "from minigrad.ops.toy import Cube\n" + triangle, 1)
    init = init.replace('__all__ = [\n', '__all__ = [\n    "Cube",\n', 1)
    (copy / "ops" / "__init__.py").write_text(init)

    env = {"PYTHONPATH": str(tmp_path), "NUMBA_ENABLE_CUDASIM": "1", "PATH": "/usr/bin:/bin"}
    # Step 2's last sentence: make stubs (the Makefile runs this module).
    stubs = [sys.executable, "-m", "minigrad.ops.tooling.stub"]
    subprocess.run(stubs, cwd=tmp_path, env=env, check=True, capture_output=True)
    result = subprocess.run([sys.executable, "-c", CHECKS], cwd=tmp_path, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")
