"""Package list for setuptools; everything else lives in pyproject.toml.

pyproject.toml cannot combine automatic discovery with an extra mapped package, so this
file does it: every package under minigrad/ is found automatically, and the top-level
folder kernels/ (with any subpackages) installs as minigrad.kernels through the
package-dir mapping declared in pyproject.toml. Works for `pip install .` and `-e .`.
"""

from setuptools import find_packages, setup

packages = find_packages(include=["minigrad", "minigrad.*"])
packages += ["minigrad.kernels"] + [f"minigrad.kernels.{p}" for p in find_packages("kernels")]

setup(packages=packages)
