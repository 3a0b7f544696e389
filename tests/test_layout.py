"""The Python side's layout, held by a test so that it stays as it is.

- What probes, report, models, ci and the tests share is one package,
  acceptlab, whose __init__ lists its modules; it imports nothing of the
  folders that use it.
- No project module outside tests/ edits sys.path or imports a module by
  its file path (spec_from_file_location, a loader, import_module or
  __import__ with a computed name, runpy): folders import each other by
  package name from the repository's top.
- Every entry point runs as a module from the top (`-m X --help` exits 0,
  with no PYTHONPATH), and run by path says how to run it in one line and
  exits 2 (not a traceback).
- The Makefile, .ci/run and the docs run modules: no `python3 path/x.py`,
  no PYTHONPATH.
- probes/harness/ is split by job and imports one way: lifecycle imports no
  other harness module, and no harness module imports a study or the
  campaign.
- The report imports no arms table (acceptlab.arms): it reads each arm's
  facts from the run's own meta.json.
- No study reads a command line (argparse) or imports or runs the campaign:
  the campaign hands each one plan (probes/plan.py), and a study's trial in
  a network namespace of its own runs in-process (probes/harness/netns.py).
Each check also runs on planted bad text, so it is known to fail.
"""

import ast
import os
import re
import subprocess

import pytest

import acceptlab
from acceptlab.paths import PYTHON, ROOT

PROJECT_DIRS = ("acceptlab", "probes", "report", "models", "ci")
FOLDERS = ("probes", "report", "models", "ci", "tests")  # what imports acceptlab
# Python files that are not part of the importable project, and why.
STANDALONE = {
    "models/checks/bare-traced-20261129/traced_run.py":
        "the record of how that check's data was taken (run once, by hand); it imports nothing of the project",
}
# Entry points whose __main__ is not a command line with --help: the tests'
# regenerators of their golden files (they take one flag).
REGENERATORS = {"tests.test_figures": "--regenerate", "tests.test_models": "--regen"}
BY_PATH = ("importlib.util.spec_from_file_location", "spec_from_file_location", "module_from_spec",
           "SourceFileLoader", "SourcelessFileLoader", "load_source", "exec_module", "run_path")
COMPUTED = ("import_module", "__import__", "run_module")


def rel(path):
    return os.path.relpath(path, ROOT).replace(os.sep, "/")


def python_files(dirs, root=ROOT):
    out = []
    for d in dirs:
        for top, subdirs, files in os.walk(os.path.join(root, d)):
            subdirs[:] = sorted(s for s in subdirs if s != "__pycache__" and not s.startswith("."))
            out += [os.path.join(top, f) for f in sorted(files) if f.endswith(".py")]
    return out


def call_name(node):
    """The called name of a Call: "spec_from_file_location" for
    importlib.util.spec_from_file_location(...), "exec" for exec(...)."""
    f = node.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return None


def import_by_path_problems(text, name="<text>"):
    """["name:line: what"] for every sys.path use, import by file path or
    import of a computed name in a module's source."""
    bad = []
    tree = ast.parse(text)
    sys_names = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
                 if a.name == "sys"} | {"sys"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", None) in sys_names:
            bad.append("%s:%d: uses sys.path" % (name, node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.module == "sys" and any(a.name == "path" for a in node.names):
            bad.append("%s:%d: imports sys.path" % (name, node.lineno))
        elif isinstance(node, ast.Call):
            called = call_name(node)
            if called in BY_PATH:
                bad.append("%s:%d: imports by file path (%s)" % (name, node.lineno, called))
            elif called in COMPUTED and not (node.args and isinstance(node.args[0], ast.Constant)):
                bad.append("%s:%d: imports a computed name (%s)" % (name, node.lineno, called))
            elif called == "exec" and node.args and isinstance(node.args[0], ast.Call):
                bad.append("%s:%d: executes a file's text (exec)" % (name, node.lineno))
    return bad


def module_of(path):
    """The module name a file under the top is run as: probes/peers/peers.py -> probes.peers.peers."""
    return rel(path)[:-3].replace("/", ".")


def has_main(text):
    return any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in ast.parse(text).body)


def entry_points():
    """Every module with a `__main__` block, in the project's folders and
    tests/: [(module, path)]."""
    out = []
    for path in python_files(PROJECT_DIRS + ("tests",)):
        if rel(path) in STANDALONE:
            continue
        with open(path) as f:
            if has_main(f.read()):
                out.append((module_of(path), path))
    return out


def clean_env():
    """The environment without PYTHONPATH: the modules must be found from the top alone."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


# ---- one package, imported by name --------------------------------------------

def test_every_python_file_is_in_a_package():
    """Each folder that holds Python is a package (an __init__.py all the way
    up from the top), so each of its modules has one import name; the
    files that are not are on STANDALONE with the reason."""
    loose = []
    for path in python_files(PROJECT_DIRS + ("tests",)):
        if rel(path) in STANDALONE:
            continue
        d = os.path.dirname(path)
        while d != ROOT:
            if not os.path.exists(os.path.join(d, "__init__.py")):
                loose.append("%s (no %s/__init__.py)" % (rel(path), rel(d)))
                break
            d = os.path.dirname(d)
    assert not loose, "Python files outside a package: " + ", ".join(loose)


def test_the_package_lists_its_modules():
    """acceptlab/__init__.py lists every module of the package, in __all__
    and in its docstring."""
    modules = sorted(os.path.basename(p)[:-3] for p in python_files(["acceptlab"])
                     if not p.endswith("__init__.py"))
    assert sorted(acceptlab.__all__) == modules, (acceptlab.__all__, modules)
    unnamed = [m for m in modules if not re.search(r"^\s+%s\s" % m, acceptlab.__doc__, re.M)]
    assert not unnamed, "acceptlab/__init__.py's docstring does not say what these are: %s" % unnamed


def imported_modules(text):
    """Every module name a source imports (absolute imports)."""
    out = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
            out.update(node.module + "." + a.name for a in node.names)
    return out


def upward_imports(paths, forbidden):
    """["file imports module"] for every import of a module under one of forbidden."""
    bad = []
    for path in paths:
        with open(path) as f:
            for m in sorted(imported_modules(f.read())):
                if any(m == p or m.startswith(p + ".") for p in forbidden):
                    bad.append("%s imports %s" % (rel(path), m))
    return bad


def test_the_package_imports_nothing_of_the_folders_that_use_it():
    bad = upward_imports(python_files(["acceptlab"]), FOLDERS)
    assert not bad, "acceptlab must stand alone: " + "; ".join(bad)


def test_the_harness_imports_one_way():
    """lifecycle imports no other harness module (they import it), and no
    harness module imports a study, the campaign, the gate or the report."""
    harness = python_files(["probes/harness"])
    lifecycle = [p for p in harness if p.endswith("lifecycle.py")]
    assert lifecycle, "probes/harness/lifecycle.py is missing"
    bad = upward_imports(lifecycle, ["probes.harness.%s" % os.path.basename(p)[:-3] for p in harness
                                     if not p.endswith(("lifecycle.py", "__init__.py"))])
    bad += upward_imports(harness, ["probes.studies", "probes.campaign", "ci", "report"])
    assert not bad, "; ".join(bad)


# The report renders a run from the run's own meta.json ("arms": the facts
# the campaign recorded), never from today's arms table, so that renaming an
# arm later does not change how an old run reads.
ARMS_TABLE = ("acceptlab.arms", "probes", "ci")  # the table, and the folders that import it


def test_the_report_imports_no_arms_table():
    """No module under report/ imports acceptlab.arms (nor probes or ci, which
    do); imported, the report's entry points leave acceptlab.arms unloaded."""
    bad = upward_imports(python_files(["report"]), ARMS_TABLE)
    assert not bad, "the report reads each arm's facts from the run's meta.json (report/common.py): " + "; ".join(bad)
    code = ("import sys, pkgutil, importlib, report, report.sections\n"
            "for pkg in (report, report.sections):\n"
            "    for m in pkgutil.iter_modules(pkg.__path__):\n"
            "        importlib.import_module(pkg.__name__ + '.' + m.name)\n"
            "print(' '.join(sorted(m for m in sys.modules if m == 'acceptlab.arms' or m.startswith(('probes', 'ci')))))")
    res = subprocess.run([PYTHON, "-c", code], cwd=ROOT, env=clean_env(), capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr[-500:]
    assert res.stdout.strip() == "", "importing report/ loads %s" % res.stdout.strip()


@pytest.mark.parametrize("text", ["from acceptlab import arms\n", "from acceptlab.arms import names\n",
                                  "import acceptlab.arms as table\n", "from probes import campaign\n"])
def test_the_check_finds_a_planted_arms_import(tmp_path, text):
    planted = tmp_path / "section.py"
    planted.write_text("from acceptlab import balance, stats\nfrom report.common import Meta\n")
    assert upward_imports([str(planted)], ARMS_TABLE) == []
    planted.write_text("from acceptlab import balance, stats\n" + text)
    assert upward_imports([str(planted)], ARMS_TABLE)
def study_problems(text, name="<text>"):
    """What a study must not do: read or build a command line (argparse: the
    campaign builds one plan, probes/plan.py), or import or run the campaign
    (a study never calls back up into its driver)."""
    mods = imported_modules(text)
    bad = ["%s imports %s" % (name, m) for m in ("argparse", "probes.campaign")
           if any(i == m or i.startswith(m + ".") for i in mods)]
    if any(isinstance(n, ast.Constant) and n.value in ("probes.campaign", "probes/campaign.py")
           for n in ast.walk(ast.parse(text))):
        bad.append("%s names the campaign to run it" % name)
    return bad


def test_studies_take_a_plan_and_never_call_the_campaign():
    bad = []
    for path in python_files(["probes/studies"]):
        with open(path) as f:
            bad += study_problems(f.read(), rel(path))
    assert not bad, "; ".join(bad)


@pytest.mark.parametrize("text", [
    "import argparse\n",
    "from probes import campaign\n",
    "from probes.campaign import STUDY\n",
    "cmd = module_cmd('probes.campaign', '--netns-trial', spec)\n",
])
def test_the_study_check_finds_planted_problems(text):
    assert len(study_problems(text)) == 1, study_problems(text)


# ---- no sys.path, no import by path ----------------------------------------------

def test_no_project_module_edits_sys_path_or_imports_by_path():
    bad = []
    for path in python_files(PROJECT_DIRS):
        with open(path) as f:
            bad += import_by_path_problems(f.read(), rel(path))
    assert not bad, ("import by package name from the repository's top instead:\n  " + "\n  ".join(bad))


@pytest.mark.parametrize("text, what", [
    ("import sys\nsys.path.insert(0, 'x')\n", "uses sys.path"),
    ("import os, sys\nsys.path.append(os.path.dirname(__file__))\n", "uses sys.path"),
    ("from sys import path\npath.insert(0, 'x')\n", "imports sys.path"),
    ("import sys as _s\n_s.path.insert(0, 'x')\n", "uses sys.path"),
    ("import importlib.util\nspec = importlib.util.spec_from_file_location('m', 'a/m.py')\n", "imports by file path"),
    ("import importlib\nm = importlib.import_module('studies.' + name)\n", "imports a computed name"),
    ("m = __import__(name)\n", "imports a computed name"),
    ("import runpy\nrunpy.run_path('probes/campaign.py')\n", "imports by file path"),
    ("exec(open('x.py').read())\n", "executes a file's text"),
])
def test_the_check_finds_planted_imports_by_path(text, what):
    found = import_by_path_problems(text)
    assert len(found) == 1 and what in found[0], found


def test_the_check_leaves_normal_imports_alone():
    text = ("import importlib\nfrom acceptlab import arms\nfrom probes.studies import cost\n"
            "m = importlib.import_module('json')\nimport os\nos.path.join('a', 'b')\n")
    assert import_by_path_problems(text) == []


# ---- entry points ------------------------------------------------------------------

def test_the_entry_points_are_found():
    """The list the next tests run is not empty by accident."""
    found = {m for m, _ in entry_points()}
    for must in ("probes.campaign", "report.report", "report.figures", "report.quicklook", "ci.gate", "models.skew",
                 "probes.peers.peers", "probes.soak", "probes.synflood", "tests.foreign_server"):
        assert must in found, (must, sorted(found))


@pytest.mark.parametrize("module", sorted(m for m, _ in entry_points() if m not in REGENERATORS))
def test_every_entry_point_runs_as_a_module(module):
    res = subprocess.run([PYTHON, "-m", module, "--help"], cwd=ROOT, env=clean_env(), capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, "-m %s --help exited %d: %s" % (module, res.returncode, res.stderr[-500:])
    assert res.stdout.strip(), "-m %s --help printed nothing" % module


@pytest.mark.parametrize("module, path", sorted(entry_points()))
def test_an_entry_point_run_by_path_says_how_to_run_it(module, path):
    """Run by path, the packages it imports are not found from there: one
    line naming the module command, exit 2, no traceback."""
    res = subprocess.run([PYTHON, path, REGENERATORS.get(module, "--help")], cwd=ROOT, env=clean_env(),
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2, (module, res.returncode, res.stderr[-500:])
    assert len(res.stderr.splitlines()) == 1 and "python3 -m %s" % module in res.stderr, res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""


# ---- the commands people and make run ------------------------------------------------

SCRIPT_BY_PATH = re.compile(r"(?:python3?|\$\(PYTHON\))\s+(?!-)(\S+\.py)\b")
SETS_PYTHONPATH = re.compile(r"PYTHONPATH\s*[:+?]?=")


def commands_by_path(text):
    """Every `python3 path/x.py` (or `$(PYTHON) path/x.py`) in a text."""
    return SCRIPT_BY_PATH.findall(text)


def doc_and_build_files():
    files = [os.path.join(ROOT, "Makefile"), os.path.join(ROOT, ".ci", "run")]
    for top, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("build", "bin", "results", "fixtures")]
        files += [os.path.join(top, n) for n in names if n.endswith(".md") and rel(os.path.join(top, n))
                  != "report/linux.md"]
    return sorted(files)


def test_make_ci_and_the_docs_run_modules():
    """No command runs one of our Python files by path, and nothing sets
    PYTHONPATH: the Makefile, .ci/run and every document run modules from
    the top (`/usr/bin/python3 -m probes.campaign ...`)."""
    bad = []
    for path in doc_and_build_files():
        with open(path) as f:
            text = f.read()
        bad += ["%s: %s" % (rel(path), s) for s in commands_by_path(text)]
        if path.endswith(("Makefile", "run")) and SETS_PYTHONPATH.search(text):
            bad.append("%s: sets PYTHONPATH" % rel(path))
    assert not bad, "run these as modules (python3 -m package.module):\n  " + "\n  ".join(bad)


def test_the_command_check_finds_planted_commands():
    text = ("\t$(PYTHON) probes/campaign.py --platform linux\n`/usr/bin/python3 report/report.py --out x`\n"
            "python3 -m report.report\n$(PYTHON) -m pytest -q tests\n")
    assert commands_by_path(text) == ["probes/campaign.py", "report/report.py"]
    assert SETS_PYTHONPATH.search("test:\n\tPYTHONPATH=. $(PYTHON) -m pytest\n")
    assert SETS_PYTHONPATH.search("export PYTHONPATH := $(CURDIR)\n")
    assert not SETS_PYTHONPATH.search("# no PYTHONPATH, no sys.path edits\n")
