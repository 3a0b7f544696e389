"""Installing where servers run: `make install` and `make deb`.

A user runs the tools on a server host, not in a clone. These tests check
what such a host gets:

- `make install DESTDIR=D PREFIX=/usr` puts every program of the Makefile's
  INSTALL_PROGRAMS under D/usr/bin, each runs `--help` (exit 0, its usage
  line) from there, and each has a man page under D/usr/share/man/man1
  whose NAME section names the program (made from its own --help, so the
  page and the program say the same); the diagnosis's advice file goes to
  D/usr/share/acceptlab/advice.tsv, and the installed acceptlab-diagnose,
  run against a server, finds it there (report/advice.tsv, or, while the
  tree has none, the tests' fixture given as make's ADVICE).
- `make deb` builds a Debian package whose Depends are shared-library
  packages only (no compiler, header, -dev package or Python) and every one
  of them is satisfied by this Debian 12 host; installed with dpkg into a
  scratch root (its own dpkg database), it holds every program and man
  page and the advice file, the programs run `--help` from that root, and
  its acceptlab-diagnose finds the advice there.
"""

import filecmp
import glob
import json
import os
import re
import shutil
import subprocess

import pytest

from tests.conftest import ROOT, Server

# The advice file installed: the tree's (report/advice.py writes it from the
# CANONICAL run), or, while the tree has none, the diagnosis tests' fixture.
TREE_ADVICE = os.path.join(ROOT, "report", "advice.tsv")
FIXTURE_ADVICE = os.path.join(ROOT, "tests", "fixtures", "diagnose", "advice.tsv")
ADVICE = TREE_ADVICE if os.path.isfile(TREE_ADVICE) else FIXTURE_ADVICE


def install_programs():
    """The Makefile's INSTALL_PROGRAMS, as make expands it."""
    out = subprocess.run(["make", "-s", "--no-print-directory", "-f", "Makefile", "-f", "-", "print-install"],
                         input="print-install:\n\t@echo $(INSTALL_PROGRAMS)\n", cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    assert out, "the Makefile names no INSTALL_PROGRAMS"
    return out


def run_help(path):
    r = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, "%s --help: exit %d: %s" % (path, r.returncode, r.stderr)
    prog = os.path.basename(path)
    assert re.search(r"usage: %s\b" % re.escape(prog), r.stdout), \
        "%s --help does not print its usage line:\n%s" % (path, r.stdout[:300])


def man_name(page_text, prog):
    """The NAME section's line of a man page's source."""
    m = re.search(r"^\.SH NAME\n(.+)$", page_text, re.M)
    assert m, "%s's man page has no NAME section" % prog
    return m.group(1)


def check_advice_found(diagnose, installed_advice):
    """The installed acceptlab-diagnose, run against a server (bare, 2
    workers; a short watch, or without root the detection alone) with no
    ACCEPTLAB_ADVICE, reads the installed advice file: ../share/acceptlab/
    from its bin/."""
    assert filecmp.cmp(installed_advice, ADVICE, shallow=False), "the installed advice is not %s" % ADVICE
    server = Server("bare", workers=2)
    try:
        env = {k: v for k, v in os.environ.items() if k != "ACCEPTLAB_ADVICE"}
        r = subprocess.run([diagnose, "--port", str(server.port), "--duration", "0.3", "--json"], capture_output=True,
                           text=True, timeout=60, env=env, cwd="/")
    finally:
        server.kill()
    assert r.returncode == 0, r.stderr
    diag = json.loads(r.stdout.splitlines()[-1])
    assert diag["kind"] == "diagnosis" and diag["closest_variant"] == "bare", diag
    assert diag["advice"] is not None, diag["advice_why"]
    assert os.path.realpath(diag["advice"]["file"]) == os.path.realpath(installed_advice), diag["advice"]
    with open(ADVICE) as f:
        assert f.readline().strip() == "# run " + diag["advice"]["run"]
    assert diag["advice"]["lines"], diag["advice"]


@pytest.fixture(scope="module")
def programs():
    if not shutil.which("help2man"):
        pytest.skip("help2man is not installed (make deps installs it as root)")
    return install_programs()


def test_make_install_puts_programs_and_man_pages(programs, tmp_path):
    r = subprocess.run(["make", "-s", "install", "DESTDIR=%s" % tmp_path, "PREFIX=/usr", "ADVICE=%s" % ADVICE],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, "make install failed:\n%s%s" % (r.stdout, r.stderr)
    for prog in programs:
        path = tmp_path / "usr" / "bin" / prog
        assert path.is_file() and os.access(path, os.X_OK), "make install did not install %s" % prog
        run_help(str(path))
        page = tmp_path / "usr" / "share" / "man" / "man1" / (prog + ".1")
        assert page.is_file(), "make install did not install %s's man page" % prog
        name = man_name(page.read_text(), prog)
        assert re.match(re.escape(prog).replace(r"\-", r"\\?-") + r" \\- \S", name), \
            "%s's man page names %r, not the program and what it does" % (prog, name)
    check_advice_found(str(tmp_path / "usr" / "bin" / "acceptlab-diagnose"),
                       str(tmp_path / "usr" / "share" / "acceptlab" / "advice.tsv"))


def deb_field(deb, field):
    return subprocess.run(["dpkg-deb", "-f", deb, field], capture_output=True, text=True, check=True).stdout.strip()


def host_satisfies(dep):
    """True when this host has an installed package satisfying one
    alternative of dep, e.g. 'libbpf1 (>= 1:0.8.0)'."""
    for alt in dep.split("|"):
        m = re.match(r"\s*([a-z0-9.+-]+)(?::\w+)?\s*(?:\((<<|<=|=|>=|>>)\s*([^)]+)\))?\s*$", alt)
        assert m, "cannot read the dependency %r" % alt
        name, op, version = m.groups()
        q = subprocess.run(["dpkg-query", "-W", "-f=${Status} ${Version}", name], capture_output=True, text=True)
        if q.returncode or not q.stdout.startswith("install ok installed"):
            continue
        installed = q.stdout.split()[-1]
        if op is None:
            return True
        rel = {"<<": "lt", "<=": "le", "=": "eq", ">=": "ge", ">>": "gt"}[op]
        if subprocess.run(["dpkg", "--compare-versions", installed, rel, version.strip()]).returncode == 0:
            return True
    return False


def test_make_deb_installs_in_a_scratch_root(programs, tmp_path):
    r = subprocess.run(["make", "-s", "deb", "ADVICE=%s" % ADVICE], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, "make deb failed:\n%s%s" % (r.stdout, r.stderr)
    deb = r.stdout.strip().splitlines()[-1]
    deb = deb if os.path.isabs(deb) else os.path.join(ROOT, deb)
    assert deb.endswith(".deb") and os.path.isfile(deb), "make deb did not print the package's path: %r" % r.stdout

    depends = [d.strip() for d in deb_field(deb, "Depends").split(",") if d.strip()]
    assert depends, "the package declares no Depends: dpkg-shlibdeps found nothing"
    for dep in depends:
        assert not re.search(r"-dev\b|\bgcc|\bclang|\bllvm|\bpython|\bmake\b|\bbpftool", dep), \
            "the package needs a build tool or header on the host: %s" % dep
        assert host_satisfies(dep), "this Debian host does not satisfy the package's %r" % dep

    root = tmp_path / "root"
    for d in ("var/lib/dpkg/info", "var/lib/dpkg/updates"):
        (root / d).mkdir(parents=True)
    (root / "var/lib/dpkg/status").touch()
    # The scratch root's own database knows none of the host's packages, so
    # the (checked above) dependencies are forced; nothing else is.
    r = subprocess.run(["dpkg", "--root=%s" % root, "--force-depends", "--force-not-root", "--log=/dev/null",
                        "-i", deb], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, "dpkg -i into a scratch root failed:\n%s%s" % (r.stdout, r.stderr)
    listed = subprocess.run(["dpkg", "--root=%s" % root, "-L", "acceptlab-tools"], capture_output=True,
                            text=True, check=True).stdout.split()
    for prog in programs:
        assert "/usr/bin/" + prog in listed, "the package does not hold %s" % prog
        assert "/usr/share/man/man1/%s.1.gz" % prog in listed, "the package does not hold %s's man page" % prog
        run_help(str(root / "usr" / "bin" / prog))
    assert "/usr/share/acceptlab/advice.tsv" in listed, "the package does not hold the diagnosis's advice"
    check_advice_found(str(root / "usr" / "bin" / "acceptlab-diagnose"),
                       str(root / "usr" / "share" / "acceptlab" / "advice.tsv"))
    assert glob.glob(str(root / "usr/share/doc/acceptlab-tools/copyright")), "the package has no copyright file"
