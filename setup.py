"""Install the lockscope package; building it also builds the C binaries.

``pip install .`` runs the top-level Makefile's ``bins`` target and ships the
binaries inside the package (``lockscope/_bin``), so an installed lockscope
works without the checkout.
"""

import os
import re
import shutil
import subprocess

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
BINARIES = ["lockscope-features", "lockscope-record", "lockscope-load"]


def package_version():
    """``__version__`` of analyzer/lockscope/__init__.py: the version is kept there only."""
    with open(os.path.join(HERE, "analyzer", "lockscope", "__init__.py")) as f:
        return re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)


class BuildWithBinaries(build_py):
    """build_py that first runs ``make bins`` and copies what it built."""

    def run(self):
        subprocess.check_call(["make", "-C", HERE, "bins"])
        super().run()
        dest = os.path.join(self.build_lib, "lockscope", "_bin")
        os.makedirs(dest, exist_ok=True)
        for name in BINARIES:
            src = os.path.join(HERE, "build", "bin", name)
            if os.path.exists(src):
                shutil.copy2(src, dest)


setup(
    name="lockscope",
    version=package_version(),
    description="Why a filesystem stops scaling: lock waits per file vs. throughput across "
                "thread counts",
    package_dir={"": "analyzer"},
    packages=find_packages("analyzer"),
    package_data={"lockscope": ["report/templates/*"]},
    python_requires=">=3.11",  # as mypy checks (pyproject.toml) and the numpy pin needs
    install_requires=[
        "numpy>=1.24",
        "matplotlib>=3.6",
        "Jinja2>=3.1",
        "rich>=13",
        "protobuf>=4.21,<5",
        "prometheus_client>=0.17",
        "PyYAML>=6",
        "bcrypt>=4",
    ],
    # lockscope attach --mysql / --postgres read the database's own counters with these.
    extras_require={"db": ["PyMySQL>=1.1", "psycopg[binary]>=3.1"]},
    entry_points={"console_scripts": ["lockscope=lockscope.cli:main"]},
    cmdclass={"build_py": BuildWithBinaries},
)
