"""docs/adding-a-variant.md, followed on a copy of the tree.

The guide's walkthrough marks its steps for this test with an HTML comment
above each block (invisible where the Markdown is rendered):

    <!-- walkthrough: write PATH -->   the block is a new file, PATH
    <!-- walkthrough: edit -->         the block is a diff: each hunk's
                                       context and "-" lines are found once
                                       in the file its "+++" line names and
                                       replaced by its context and "+" lines
    <!-- walkthrough: run -->          the block runs in bash (-e, pipefail)
                                       from the copy's top

The scratch test copies the tree (without .git and results/; bin/ and
build/'s files with their times, so make rebuilds only what the steps
change), then takes the steps in the guide's order: the C file, the
registry, `make`, `--list-variants`, the tables written and checked, the
arm rows, tests/test_arms.py and tests/test_readme.py in the copy, and a
server on --port 0 answering the probe's /pid. The guide's commands are
the commands run, so the guide cannot drift from what works.

The other tests hold the guide's tables to the code they describe: the arm
row's fields and defaults (acceptlab/arms.py's Arm), the variant's members
(servers/server.h's struct accept_variant) and the study words the arms
table uses.
"""

import ast
import os
import re
import shutil
import signal
import subprocess
from dataclasses import MISSING, fields

import pytest

from acceptlab import arms
from probes import campaign
from tests.conftest import PYTHON, ROOT, SERVER

DOC = os.path.join(ROOT, "docs", "adding-a-variant.md")
STEP = re.compile(r"^<!-- walkthrough: (?P<kind>write|edit|run)(?: (?P<path>\S+))? -->[ \t]*\n+"
                  r"```(?P<lang>\w*)\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
# Left out of the copy: the history, the measured runs, what a run or a
# test leaves behind. bin/ and build/ are copied apart (their files only).
NOT_COPIED = {".git", "results", "bin", "build"}
BLOCK_TIMEOUT_S = 300


def read_doc():
    with open(DOC, encoding="utf-8") as f:
        return f.read()


def steps(text):
    """The walkthrough's marked steps, in order: [(kind, path, body)]."""
    return [(m.group("kind"), m.group("path"), m.group("body")) for m in STEP.finditer(text)]


# ---------------------------------------------------------------- the edit steps

def parse_diff(body):
    """A diff block: (path, [(before lines, after lines), ...]). The path is
    the "+++ b/PATH" line's; each "@@" line starts a hunk (what follows "@@"
    is a label for the reader, not line numbers)."""
    path, hunks = None, []
    for line in body.splitlines():
        if line.startswith("+++ "):
            path = line[4:].strip()
            path = path[2:] if path.startswith("b/") else path
        elif line.startswith("--- "):
            continue
        elif line.startswith("@@"):
            hunks.append(([], []))
        elif hunks:
            mark, rest = (line[:1], line[1:]) if line else (" ", "")
            if mark not in " +-":
                raise ValueError("diff line %r starts with neither space, + nor -" % line)
            if mark in " -":
                hunks[-1][0].append(rest)
            if mark in " +":
                hunks[-1][1].append(rest)
        elif line.strip():
            raise ValueError("diff line %r comes before the first @@" % line)
    if path is None or not hunks:
        raise ValueError("a diff block needs a +++ line and at least one @@ hunk")
    return path, hunks


def apply_hunks(text, hunks, path="the file"):
    """text with each hunk applied in turn; ValueError naming the hunk
    whose lines are not in the text exactly once."""
    lines = text.split("\n")
    for n, (before, after) in enumerate(hunks, 1):
        at = [i for i in range(len(lines) - len(before) + 1) if lines[i:i + len(before)] == before]
        if len(at) != 1:
            raise ValueError("%s: hunk %d's lines are %s:\n  %s" % (path, n, "not there" if not at else
                             "there %d times" % len(at), "\n  ".join(before)))
        lines[at[0]:at[0] + len(before)] = after
    return "\n".join(lines)


def test_the_edit_applier_applies_and_refuses():
    """A hunk replaces the lines it names; one whose lines are missing, or
    there twice, is refused naming the file and the hunk."""
    path, hunks = parse_diff("--- a/x.c\n+++ b/x.c\n@@ the list\n \t&a,\n+\t&b,\n \tNULL,\n")
    assert path == "x.c"
    assert apply_hunks("list = {\n\t&a,\n\tNULL,\n};", hunks) == "list = {\n\t&a,\n\t&b,\n\tNULL,\n};"
    with pytest.raises(ValueError, match="x.c: hunk 1's lines are not there"):
        apply_hunks("list = {\n\t&z,\n\tNULL,\n};", hunks, "x.c")
    with pytest.raises(ValueError, match="there 2 times"):
        apply_hunks("\t&a,\n\tNULL,\n\t&a,\n\tNULL,", hunks, "x.c")
    with pytest.raises(ValueError, match="needs a \\+\\+\\+ line"):
        parse_diff("--- a/x.c\n@@ a hunk\n \tNULL,\n")


# ---------------------------------------------------------------- the guide's tables

def table_rows(text, header):
    """The rows of the markdown table whose header row starts with header:
    [[cell, ...], ...] (cells stripped, the separator row dropped)."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith(header)), None)
    assert start is not None, "docs/adding-a-variant.md has no table whose header starts %r" % header
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    return rows


def code(cell):
    """The backquoted names in a cell: "`quick:cost`, `quick:payoff`" -> [...]."""
    return re.findall(r"`([^`]+)`", cell)


def field_table_problems(text):
    """What is wrong with the guide's table of the arm row's fields:
    [message, ...], empty when it names every field of acceptlab/arms.py's
    Arm and nothing else, the two positional ones "required", each default
    the dataclass's (an arm given the guide's default equals one given
    nothing), the properties "derived"."""
    rows = {code(r[0])[0]: r[1] for r in table_rows(text, "| field | default |") if code(r[0])}
    declared = {f.name: f for f in fields(arms.Arm)}
    derived = {n for n, v in vars(arms.Arm).items() if isinstance(v, property)}
    problems = ["it has no row for %s" % n for n in sorted((set(declared) | derived) - set(rows))]
    problems += ["it has a row for %s, which Arm does not have" % n
                 for n in sorted(set(rows) - set(declared) - derived)]
    bare = arms.Arm("x", "y")
    for name, default in rows.items():
        if name in derived:
            if default != "derived":
                problems.append("%s is a property of Arm: its default cell says %r, not derived" % (name, default))
            continue
        f = declared.get(name)
        if f is None:
            continue
        if f.default is MISSING and f.default_factory is MISSING:
            if default != "required":
                problems.append("%s has no default in Arm; the guide says %r" % (name, default))
            continue
        literal = code(default)
        if len(literal) != 1:
            problems.append("%s: its default cell %r is not one `literal`" % (name, default))
            continue
        try:
            given = arms.Arm("x", "y", **{name: ast.literal_eval(literal[0])})
        except (ValueError, SyntaxError) as e:
            problems.append("%s: its default %s is no Python literal (%s)" % (name, literal[0], e))
            continue
        if getattr(given, name) != getattr(bare, name):
            problems.append("%s: the guide's default %s is not Arm's (%r)" % (name, literal[0], getattr(bare, name)))
    return problems


def test_the_field_table_is_the_arm_row():
    problems = field_table_problems(read_doc())
    assert not problems, "docs/adding-a-variant.md's table of the arm row: " + "; ".join(problems)


def test_the_field_table_check_fails_on_a_wrong_table():
    """The check itself: a row left out, a field Arm lacks, a wrong default
    and a positional field given a default are each named."""
    text = read_doc()
    wrong = re.sub(r"^\| `place` \|.*\n", "", text, flags=re.M)
    wrong = wrong.replace("| `needs_root` | `False` |", "| `needs_root` | `True` |")
    wrong = wrong.replace("| `variant` | required |", "| `variant` | `None` |")
    wrong = wrong.replace("| `mode` | derived |", "| `mode` | derived |\n| `weight` | `1` | x | y |")
    problems = " | ".join(field_table_problems(wrong))
    for must in ("no row for place", "a row for weight", "needs_root: the guide's default True",
                 "variant has no default"):
        assert must in problems, (must, problems)


def struct_members(header_text, struct):
    """The member names of `struct NAME { ... };` in a C header: plain
    members and function pointers, comments dropped."""
    m = re.search(r"^struct %s \{\n(.*?)^\};" % struct, header_text, re.M | re.S)
    assert m, "servers/server.h has no struct %s" % struct
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    names = []
    for decl in body.split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        fn = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
        names.append(fn.group(1) if fn else re.search(r"(\w+)\s*(\[[^\]]*\])?$", decl).group(1))
    return names


def test_the_member_table_is_struct_accept_variant():
    """The guide's table of a variant's members lists exactly the members of
    struct accept_variant in servers/server.h, in its order, and says which
    are needed."""
    with open(os.path.join(ROOT, "servers", "server.h")) as f:
        members = struct_members(f.read(), "accept_variant")
    assert {"name", "mechanism", "worker_start", "listener_readable"} <= set(members), members
    rows = table_rows(read_doc(), "| member |")
    assert [code(r[0])[0] for r in rows] == members, (
        "the guide's member table %s; struct accept_variant has %s" % ([code(r[0])[0] for r in rows], members))
    needed = {code(r[0])[0] for r in rows if r[2].startswith("yes")}
    assert needed == {"name", "mechanism", "worker_start", "listener_readable"}, needed


def test_the_words_table_has_every_study_word():
    """Every study word acceptlab/arms.py uses is in the guide's table of
    words, and every word there names a study the campaign runs."""
    listed = {w for r in table_rows(read_doc(), "| word |") for w in code(r[0])}
    missing = sorted(set(arms.study_words()) - listed)
    assert not missing, "study words in acceptlab/arms.py that the guide's table leaves out: %s" % missing
    studies = set(campaign.STUDIES) | {"quick"}
    unknown = sorted(w for w in listed if (w[6:] if w.startswith("quick:") else w).split(":")[0].split("+")[0]
                     not in studies)
    assert not unknown, "words in the guide's table that name no study: %s" % unknown


def test_the_walkthrough_takes_every_step():
    """The marked steps are the whole walkthrough: a new variant file, the
    registry and the arms table edited, and the build, the tables, the
    tests and a server run, in that order."""
    found = steps(read_doc())
    kinds = [(k, p) for k, p, _ in found]
    assert [p for k, p in kinds if k == "write"] and all(
        re.fullmatch(r"servers/variants/\w+\.c", p) for k, p in kinds if k == "write"), kinds
    edited = [parse_diff(b)[0] for k, _, b in found if k == "edit"]
    assert edited == ["servers/variants.c", "acceptlab/arms.py"], edited
    runs = "\n".join(b for k, _, b in found if k == "run")
    for must in ("make", "-m ci.server_tables --write", "-m ci.server_tables --check", "--list-variants",
                 "-m pytest -q tests/test_arms.py", "--port 0", "bin/acceptlab-probe"):
        assert must in runs, "the walkthrough's run steps never run %r" % must
    order = [k if k != "run" else b.split()[0] for k, _, b in found]
    assert order.index("make") > order.index("edit") and order.index("make") > order.index("write"), order


# ---------------------------------------------------------------- the walkthrough on a copy

def copy_tree(dest):
    """The tree as it is now (committed or not) into dest, bin/ and build/'s
    files with their modification times."""
    shutil.copytree(ROOT, dest, symlinks=True, ignore=lambda d, names: [
        n for n in names if n in ("__pycache__", ".pytest_cache")
        or (os.path.abspath(d) == ROOT and n in NOT_COPIED)])
    for sub in ("bin", "build"):
        src = os.path.join(ROOT, sub)
        os.makedirs(os.path.join(dest, sub), exist_ok=True)
        for name in os.listdir(src) if os.path.isdir(src) else []:
            if os.path.isfile(os.path.join(src, name)):
                shutil.copy2(os.path.join(src, name), os.path.join(dest, sub, name))


def run_block(body, cwd):
    """Runs a shell block from cwd in a session of its own; whatever it
    leaves running (a server) is killed with its group afterwards."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the copy's packages, not ours
    proc = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", body], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=BLOCK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail("this step ran over %d s:\n%s\n--- its output:\n%s" % (BLOCK_TIMEOUT_S, body, out[-3000:]))
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return proc.returncode, out


def missing_tools():
    tools = ["make", "gcc", "bash"]
    if not os.path.exists(os.path.join(ROOT, "build", "worker_load.skel.h")):
        tools += ["clang", "bpftool"]  # the server's BPF skeleton is built too
    return [t for t in tools if shutil.which(t) is None]


def scratch_python(cwd, code_text):
    res = subprocess.run([PYTHON, "-c", code_text], cwd=cwd, capture_output=True, text=True, timeout=60,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_the_walkthrough_adds_a_variant(tmp_path):
    """The guide's steps, in its order, on a copy of the tree: each run step
    exits 0; then the copy's server lists the new variant, both variants
    tables have its row, and the copy's arms table has its rows."""
    absent = missing_tools()
    if absent:
        pytest.skip("the walkthrough builds the server: %s not on PATH" % ", ".join(absent))
    found = steps(read_doc())
    written = [p for k, p, _ in found if k == "write"]
    assert not os.path.exists(os.path.join(ROOT, written[0])), (
        "%s is in the tree already: the walkthrough's variant must be a new one" % written[0])
    name = re.search(r'struct accept_variant \w+ = \{.*?\.name = "([^"]+)"',
                     next(b for k, _, b in found if k == "write"), re.S).group(1)
    res = subprocess.run([SERVER, "--list-variants"], capture_output=True, text=True, timeout=10)
    assert '"variant":"%s"' % name not in res.stdout, "the server already has a variant %s" % name

    tree = str(tmp_path / "tree")
    copy_tree(tree)
    for n, (kind, path, body) in enumerate(found, 1):
        if kind == "write":
            with open(os.path.join(tree, path), "w") as f:
                f.write(body)
        elif kind == "edit":
            path, hunks = parse_diff(body)
            full = os.path.join(tree, path)
            with open(full) as f:
                text = f.read()
            try:
                text = apply_hunks(text, hunks, path)
            except ValueError as e:
                pytest.fail("step %d of docs/adding-a-variant.md does not apply: %s" % (n, e))
            with open(full, "w") as f:
                f.write(text)
        else:
            rc, out = run_block(body, tree)
            assert rc == 0, "step %d of docs/adding-a-variant.md exited %d:\n%s\n--- its output:\n%s" % (
                n, rc, body, out[-4000:])

    listed = subprocess.run([os.path.join(tree, "bin", "acceptlab-server"), "--list-variants"],
                            capture_output=True, text=True, timeout=10).stdout
    assert '"variant":"%s"' % name in listed, listed
    for doc in ("README.md", os.path.join("docs", "server.md")):
        with open(os.path.join(tree, doc)) as f:
            assert "| `%s` |" % name in f.read(), "%s in the copy has no row for %s" % (doc, name)
    rows = scratch_python(tree, "from acceptlab import arms\n"
                                "print(' '.join(a.name for a in arms.TABLE if a.variant == %r))" % name).split()
    assert rows and name in rows, "the copy's arms table has no arm named %s (arms of it: %s)" % (name, rows)
