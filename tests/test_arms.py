"""The arms table (acceptlab/arms.py) against the server it describes and the
guide that tells how to add a variant.

`bin/acceptlab-server --list-variants` prints one JSON line per variant
(its modes, its knob options, its mechanism): every variant must have an
arm and every arm a variant, run in a mode the variant supports with only
the knobs it lists; a knob-off or process-mode partner must be an arm of
the same variant; every study's query must return known arms. The guide
(docs/adding-a-variant.md) must name exactly the places a variant is added,
and only fields the table has. Each failure names what is missing.
"""

import json
import os
import re
import subprocess
from dataclasses import fields

import pytest

from acceptlab import arms
from probes import campaign
from probes.studies import faults, mutex_delay, placement, trace_overhead
from tests.conftest import ROOT, SERVER

DOC = os.path.join(ROOT, "docs", "adding-a-variant.md")
# Where a variant is added: its C file, the C registry, the arms table, and
# the two documents whose variants tables carry it (README.md; docs/server.md,
# which also says what its table row leaves out). Nothing else may need an
# edit; the tables themselves are rendered (ci/server_tables.py).
PLACES = {"servers/variants/<name>.c", "servers/variants.c", "acceptlab/arms.py", "README.md", "docs/server.md"}
FIELDS = {f.name for f in fields(arms.Arm)} | {"mode", "server_args"}


@pytest.fixture(scope="module")
def variants():
    """{variant: its --list-variants line}."""
    res = subprocess.run([SERVER, "--list-variants"], capture_output=True, text=True, timeout=10)
    assert res.returncode == 0, "acceptlab-server --list-variants exited %d: %s" % (res.returncode, res.stderr)
    lines = [json.loads(l) for l in res.stdout.splitlines() if l.strip()]
    assert lines, "acceptlab-server --list-variants printed no variant"
    return {v["variant"]: v for v in lines}


def test_every_variant_has_an_arm_and_every_arm_a_variant(variants):
    have = {a.variant for a in arms.TABLE}
    missing = sorted(set(variants) - have)
    assert not missing, "no arm in acceptlab/arms.py runs the server's variant(s) %s" % ", ".join(missing)
    unknown = ["%s (--variant %s)" % (a.name, a.variant) for a in arms.TABLE if a.variant not in variants]
    assert not unknown, "arms whose variant the server does not list: %s" % ", ".join(unknown)


def test_arm_names_are_unique():
    names = [a.name for a in arms.TABLE]
    twice = sorted({n for n in names if names.count(n) > 1})
    assert not twice, "arm names used twice in acceptlab/arms.py: %s" % ", ".join(twice)


def test_each_arm_uses_its_variants_knobs_and_modes(variants):
    bad = []
    for a in arms.TABLE:
        listed = variants.get(a.variant)
        if listed is None:
            continue  # the test above names it
        if a.mode not in listed["modes"]:
            bad.append("%s runs in %s mode; %s supports %s" % (a.name, a.mode, a.variant, ", ".join(listed["modes"])))
        for option in a.options:
            if option.startswith("--") and option != "--threads" and option not in listed["knobs"]:
                bad.append("%s uses %s, which is not among %s's knobs (%s)"
                           % (a.name, option, a.variant, ", ".join(listed["knobs"]) or "none"))
    assert not bad, "; ".join(bad)


def test_partners_are_arms_of_the_same_variant():
    bad = []
    for a in arms.TABLE:
        for what, partner in (("knob-off arm", a.knob_off), ("process-mode arm", a.process_arm),
                              ("reference arm", a.reference), ("same-mechanism arm", a.same_mechanism)):
            if partner is None:
                continue
            if partner not in arms.names():
                bad.append("%s's %s %s is not an arm" % (a.name, what, partner))
            elif what == "knob-off arm" and arms.get(partner).variant != a.variant:
                bad.append("%s's knob-off arm %s runs %s, not %s" % (a.name, partner, arms.get(partner).variant,
                                                                    a.variant))
            elif what == "process-mode arm" and arms.get(partner).mode != "process":
                bad.append("%s's process-mode arm %s runs in threads mode" % (a.name, partner))
    assert not bad, "; ".join(bad)


def test_fields_hold_known_values():
    bad = []
    for a in arms.TABLE:
        if a.when_stopped not in (None,) + arms.WHEN_STOPPED:
            bad.append("%s: when_stopped %r is not one of %s" % (a.name, a.when_stopped, ", ".join(arms.WHEN_STOPPED)))
        if a.mode == "process" and not a.env and a.when_stopped is None:
            bad.append("%s: a process arm the tests serve must say when_stopped (%s)"
                       % (a.name, ", ".join(arms.WHEN_STOPPED)))
        for study in a.place:
            if study not in {w.split(":")[0] for w in a.studies}:
                bad.append("%s: a place in %s, a study it is not in" % (a.name, study))
    assert not bad, "; ".join(bad)


def test_not_applicable_names_shapes_and_follows_one_request(variants):
    """Each not_applicable word is "study:shape" for a study that runs the
    probe's shapes (arms.SHAPED_STUDIES) and includes the arm, with a
    reason; an arm of a variant that answers one request per connection
    (--list-variants' "one_request") marks the keepalive shape of each such
    study it is in, and no other arm marks it."""
    bad = []
    for a in arms.TABLE:
        for word, reason in a.not_applicable.items():
            study, _, shape = word.partition(":")
            if shape not in arms.SHAPED_STUDIES.get(study, ()):
                bad.append("%s: not_applicable %r names no shape of a study that runs shapes (%s)"
                           % (a.name, word, ", ".join("%s:%s" % (st, sh) for st, shapes in
                                                      arms.SHAPED_STUDIES.items() for sh in shapes)))
            elif study != "balancing" and study not in a.studies:
                bad.append("%s: not_applicable %r, but it is not in the %s study" % (a.name, word, study))
            if not isinstance(reason, str) or not reason.strip():
                bad.append("%s: not_applicable %r gives no reason" % (a.name, word))
        one_request = variants.get(a.variant, {}).get("one_request")
        for study in ("balancing", "perturbation"):
            if study != "balancing" and study not in a.studies:
                continue
            marked = arms.not_applicable(a.name, study, "keepalive") is not None
            if one_request and not marked:
                bad.append("%s answers one request per connection, but %s:keepalive is not marked not_applicable"
                           % (a.name, study))
            elif marked and not one_request:
                bad.append("%s keeps connections alive, but %s:keepalive is marked not_applicable"
                           % (a.name, study))
    assert not bad, "; ".join(bad)


def study_of(word):
    """The study a membership word names: "quick:cost" -> cost,
    "cost:one_worker" -> cost, "reload+spawn" -> reload, "quick" -> quick."""
    word = word.split(":", 1)[1] if word.startswith("quick:") else word.split(":", 1)[0]
    return word.split("+", 1)[0]


def test_every_study_query_returns_known_arms():
    known = set(arms.names())
    words = arms.study_words()
    unknown_words = [w for w in words if study_of(w) not in set(campaign.STUDIES) | {"quick"}]
    assert not unknown_words, "membership words in acceptlab/arms.py that name no study: %s" % ", ".join(unknown_words)
    queries = {w: arms.in_study(w) for w in words}
    queries.update({"respawn cases": [a for a, _ in arms.respawn_cases()],
                    "reload cases": [a for a, _, _ in arms.reload_cases()],
                    "quick reload cases": [a for a, _, _ in arms.reload_cases(quick=True)],
                    "claiming balance": arms.claiming_balance(), "default arms": arms.default_arms(),
                    "quick": campaign.QUICK_ARMS,
                    "named by a study": [mutex_delay.MUTEX_ARM, faults.FAULTS_ARM, placement.STOP_WINNER_ARM,
                                         trace_overhead.TRACE_OVERHEAD_ARM]})
    bad = ["%s: %s" % (q, ", ".join(sorted(set(got) - known))) for q, got in queries.items() if set(got) - known]
    assert not bad, "study queries that return arms not in the table: %s" % "; ".join(bad)
    for study in ("cost", "payoff", "burst", "placement", "perturbation", "timeline", "slowview", "quick"):
        assert queries.get(study), "no arm is in the %s study (acceptlab/arms.py)" % study


# ---------------------------------------------------------------- docs/adding-a-variant.md

ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
LEADING_PATH = re.compile(r"^`([^`]+)`")


def places_list(text):
    """The guide's list of places to touch: the first markdown list whose
    items each start with a backquoted path. Returns [(path, the item's
    text with its continuation lines)]."""
    items, indent = [], None
    for line in text.splitlines():
        m = ITEM.match(line)
        if m and (indent is None or len(m.group(1)) == indent):
            path = LEADING_PATH.match(m.group(2))
            if not path:
                if items:
                    break  # a list item that names no path: the list of places is over
                continue
            indent = len(m.group(1))
            items.append([path.group(1), m.group(2)])
        elif items and (not line.strip() or line.startswith(" " * (indent + 1)) or (m and len(m.group(1)) > indent)):
            items[-1][1] += "\n" + line
        elif items:
            break
    return [(p, body) for p, body in items]


def normal_path(path):
    """servers/variants/<variant>.c, servers/variants/NAME.c -> servers/variants/<name>.c."""
    return re.sub(r"<[^>]+>|\{[^}]+\}|\bNAME\b|\bVARIANT\b", "<name>", path.strip())


def check_guide(text):
    """What is wrong with the guide's text: [message, ...] (empty when right)."""
    places = places_list(text)
    if not places:
        return ["it has no list of places to touch (a markdown list whose items start with a backquoted path)"]
    named = {normal_path(p) for p, _ in places}
    problems = []
    if PLACES - named:
        problems.append("its list of places does not name %s" % ", ".join(sorted(PLACES - named)))
    if named - PLACES:
        problems.append("its list of places names %s, which adding a variant must not need"
                        % ", ".join(sorted(named - PLACES)))
    allowed = (FIELDS | {n for n in dir(arms) if not n.startswith("_")} | set(arms.names())
               | {a.variant for a in arms.TABLE} | set(campaign.STUDIES) | set(arms.study_words())
               | {"quick", "True", "False", "None"})
    for path, body in places:
        if normal_path(path) != "acceptlab/arms.py":
            continue
        for token in re.findall(r"`([^`]+)`", body)[1:]:
            ident = token.split("=", 1)[0].strip().strip("\"'")
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ident) and ident not in allowed:
                problems.append("it names `%s` for acceptlab/arms.py, which the arms table has no field, query or "
                                "study called" % ident)
    return problems


def test_the_guide_check_fails_on_a_wrong_guide():
    """The guide check itself: a right list passes; a list that misses a
    place, adds one, or names a field the table does not have fails, naming it."""
    right = ("# Adding a variant\n\nTouch these:\n\n- `servers/variants/<name>.c`: the accept path\n"
             "- `servers/variants.c`: register it\n- `acceptlab/arms.py`: its rows; set `knob_off`,\n"
             "  `needs_root=True` and `studies` as they apply\n- `README.md`: the variants table\n"
             "- `docs/server.md`: its table row and notes\n\n"
             "Nothing else:\n\n- `tests/conftest.py` reads the table\n")
    assert check_guide(right) == []
    wrong = right.replace("- `servers/variants.c`: register it\n", "- `tests/conftest.py`: a list\n")
    wrong = wrong.replace("`knob_off`", "`knob_off_partner`")
    problems = " | ".join(check_guide(wrong))
    assert "does not name servers/variants.c" in problems, problems
    assert "names tests/conftest.py" in problems, problems
    assert "`knob_off_partner`" in problems, problems


def test_the_guide_names_exactly_the_places_a_variant_is_added():
    if not os.path.exists(DOC):
        pytest.skip("docs/adding-a-variant.md is not in this tree yet")
    with open(DOC) as f:
        problems = check_guide(f.read())
    assert not problems, "docs/adding-a-variant.md: " + "; ".join(problems)


# ---------------------------------------------------------------- the facts a run records (meta.json "arms")


def test_meta_facts_say_what_the_table_says():
    """meta_facts gives each arm's server, partners, claims and study places
    as the table has them, so the report reads the same from a run's
    meta.json as it read from the table when the run was measured."""
    facts = arms.meta_facts(arms.names())
    assert list(facts) == arms.names()
    for a in arms.TABLE:
        f = facts[a.name]
        assert (f["variant"], f["mode"], f["options"], f["env"]) == (a.variant, a.mode, list(a.options), dict(a.env))
        assert {p: f[p] for p in arms.FACT_PARTNERS} == {p: getattr(a, p) for p in arms.FACT_PARTNERS}
        assert {c: f[c] for c in arms.FACT_FLAGS} == {c: getattr(a, c) for c in arms.FACT_FLAGS}
    assert [f["order"] for f in facts.values()] == list(range(len(arms.TABLE)))
    for word in arms.study_words():
        placed = sorted((f["in_study"][word], name) for name, f in facts.items() if word in f["in_study"])
        assert [name for _, name in placed] == arms.in_study(word), word
    assert json.loads(json.dumps(facts)) == facts, "meta_facts must be plain JSON"


def test_meta_facts_bring_every_partner_along():
    """An arm's facts come with those of every arm it names (its knob-off,
    reference, process-mode and same-mechanism arms, and theirs)."""
    facts = arms.meta_facts(["fdpass-threads"])
    # fdpass's reference is reuseport-bpf, whose own is reuseport
    assert set(facts) == {"fdpass-threads", "fdpass", "fdpass-off", "fdpass-off-threads", "bare", "reuseport-bpf",
                          "reuseport"}
    for name, f in facts.items():
        assert all(f[p] in facts for p in arms.FACT_PARTNERS if f[p]), name
