"""paths: where the project is and how one of its programs is run.

Every Python entry point is a module run from the repository's top
(`/usr/bin/python3 -m probes.campaign ...`): the packages it imports
(acceptlab, probes, report, models, ci) are found there, and nowhere is
sys.path edited. A program that starts another one of ours builds the
command with module_cmd(): the child finds the packages where its parent
did (the same working directory, or the same PYTHONPATH).
"""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository's top
PYTHON = "/usr/bin/python3"  # Debian's: the one with pytest, matplotlib and numpy


def module_cmd(module, *args):
    """[PYTHON, "-m", module, args...]: one of the project's entry points
    (module: "probes.campaign", "models.skew", ...), run from the
    repository's top (cwd=ROOT) or with PYTHONPATH naming it."""
    return [PYTHON, "-m", module, *map(str, args)]
