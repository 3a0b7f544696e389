"""arms.py: the one table of arms, read by the campaign, its studies, the
gate, the soak and the tests.

An arm is a name in the tables and the server that makes it: a variant
(`bin/acceptlab-server --variant`), its options and environment. The table
is in the order the campaign runs its arms (each threads arm after its
process arm, so the tables show them side by side); every list of arms a
study, the gate or a test needs is a query on it. Adding a variant adds its
rows here (see docs/adding-a-variant.md); no other list names it.

An arm's fields:

  name                    the arm's name in the campaign's --arms, the rows and the report
  variant                 the server's --variant
  options                 server options after the variant (its knobs); one that
                          holds "--threads" runs in threads mode, and the harness
                          puts the worker count after it ("--workers N" otherwise)
  env                     environment its server runs with, on top of the campaign's
  needs_root              its server loads a BPF program (CAP_BPF)
  knob_off                the arm with the mechanism off, same binary: cost gives the ratio to it
  reference               an arm of another mechanism cost compares it with: where the
                          mechanism is no knob of its own binary, the arm without it
                          (reuseport-bpf: reuseport, the same sockets without the BPF
                          program); fdpass: reuseport-bpf, which spreads connections
                          alike (exactly, by the same load) and does nothing per
                          request, its keep-alive partner (a knob-off arm's bare race
                          spreads them by chance, and CPU per request follows the
                          spread): cost gives the ratio to it
  process_arm             the same variant in process mode (or what stands in for it):
                          cost gives a threads arm's ratio to it
  aa_of                   an A/A arm: the same server as this arm, measured as an arm of
                          its own in the same rounds (bare-aa: bare); cost gives its
                          ratio to it as the method's resolution, the floor every cost
                          verdict is judged against
  same_mechanism          the arm whose mechanism this one runs in another binary or mode
                          (fdpass-off: the bare race in fdpass's binary; handoff-off:
                          plain reuseport in threads): the payoff and burst sections
                          give their distance as the run's noise between two
                          measurements of one mechanism
  reload_loses_none       a reload (SIGHUP) under load must lose no request
  acceptor_is_not_owner   the worker that accepts is not always the one that serves:
                          the tracer's accepts won and the probe's counts differ by design
  claims_balance          holds the balancing target (the gate, the perturbation study);
                          its knob-off arm is reported, not held
  when_stopped            a SIGSTOPped worker (process arms the tests serve): "others"
                          (the other workers take every new connection), "queued"
                          (some are queued at it and answered once it runs) or
                          "stall" (accepting stalls, as nginx's token holder does)
  measurement_only        an arm nobody serves with (a knob-off arm, the note's policy
                          as written): the soak leaves it out
  default                 in --arms' default; an arm that is not runs in the cost
                          study alone, beside any chosen arm of its variant
  studies                 the studies that include it, besides balancing (which runs
                          every chosen arm), as words:
                            quick                  --quick's arms
                            cost, payoff, burst, placement, perturbation
                                                   in the study (and "quick:<study>"
                                                   in its --quick run)
                            placement:workers      placement runs it at more workers too
                                                   (nothing pinned, a hog beside worker 0)
                            cost:one_worker        make bench's cost runs it at 1 worker too
                            cost:bench             make bench's cost runs it (the campaign's
                                                   does not)
                            timeline, slowview     in the study
                            diagnosis, quick:diagnosis
                                                   the diagnosis study (bin/acceptlab-diagnose
                                                   beside the server's own record), and its
                                                   --quick run; the variant needs its row in
                                                   probes/studies/diagnosis.py's OURS_EXPECTED
                            respawn, respawn+migrate
                                                   a respawn trial, without and with
                                                   --reuseport-migrate
                            reload, reload+migrate, reload+spawn, quick:reload+spawn
                                                   a reload trial, plain, with
                                                   --reuseport-migrate, with
                                                   --spawn-workers; and in --quick
  place                   {study: n}: the arm's place in a study whose order is not the
                          table's (lower first; the table's order breaks ties)
  not_applicable          {"study:shape": reason}: a shape a study runs that does not apply
                          to the arm (blocking's keepalive: one answer per connection);
                          the study writes one row saying so, with the reason, in place of
                          its rounds, and the report shows it as not applicable
"""

from dataclasses import dataclass, field

SHARE_OFF = {"ACCEPTLAB_ACCEPT_SHARE": "0"}   # fdpass's knob off: the bare race, same binary
USER_ACCOUNTING = {"ACCEPTLAB_ACCOUNTING": "user"}  # load counted in user space (servers/load.h)
HERD_WAKE = {"ACCEPTLAB_ACCEPT_EXCLUSIVE": "0"}  # fdpass: every worker woken per connection, with deferral
WHEN_STOPPED = ("others", "queued", "stall")
# The studies that run the probe's shapes, and the shapes: what
# not_applicable's "study:shape" words may name.
SHAPED_STUDIES = {"balancing": ("burst", "ramp", "keepalive"), "perturbation": ("burst", "ramp", "keepalive")}
# Why the keepalive shape does not apply to a variant that answers one
# request per connection (--list-variants' "one_request": blocking).
ONE_REQUEST = ("one request per connection: every answer says Connection: close (a worker serves one "
               "connection at a time), so the shape's held connections have no second request to ask")


@dataclass(frozen=True, eq=False)
class Arm:
    name: str
    variant: str
    options: tuple = ()
    env: dict = field(default_factory=dict)
    needs_root: bool = False
    knob_off: str = None
    reference: str = None
    process_arm: str = None
    aa_of: str = None
    same_mechanism: str = None
    reload_loses_none: bool = False
    acceptor_is_not_owner: bool = False
    claims_balance: bool = False
    when_stopped: str = None
    measurement_only: bool = False
    default: bool = True
    studies: frozenset = frozenset()
    place: dict = field(default_factory=dict)
    not_applicable: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "options", tuple(self.options))
        if isinstance(self.studies, str):
            object.__setattr__(self, "studies", frozenset(self.studies.split()))

    @property
    def mode(self):
        return "threads" if "--threads" in self.options else "process"

    @property
    def server_args(self):
        """The server's arguments for this arm (the worker count aside)."""
        return ["--variant", self.variant, *self.options]


TABLE = [
    Arm("bare", "bare", when_stopped="others", reload_loses_none=True,
        studies="quick cost quick:cost cost:one_worker payoff quick:payoff burst quick:burst placement "
                "quick:placement placement:workers timeline respawn reload diagnosis quick:diagnosis",
        place={"cost": 1, "payoff": 1, "burst": 1, "placement": 1}),
    # bare again, as an arm of its own in the cost study's rounds: its ratio to
    # bare is what the method resolves (an A/A floor).
    Arm("bare-aa", "bare", aa_of="bare", when_stopped="others", measurement_only=True, default=False,
        studies="cost quick:cost",
        place={"cost": 1}),
    Arm("bare-threads", "bare", ["--threads"], process_arm="bare", studies="quick cost:bench", place={"cost": 5}),
    # The race with every thread waiting in ONE epoll instance: any thread may
    # serve any connection's next request.
    Arm("bare-shared-epoll", "bare", ["--threads", "--shared-epoll"], acceptor_is_not_owner=True),
    Arm("exclusive", "exclusive", when_stopped="others", reload_loses_none=True,
        studies="quick placement placement:workers timeline reload diagnosis", place={"placement": 2}),
    Arm("exclusive-threads", "exclusive", ["--threads"], process_arm="exclusive"),
    Arm("exclusive-reorder", "exclusive-reorder", when_stopped="others", reload_loses_none=True,
        studies="cost payoff burst reload diagnosis", place={"cost": 12, "payoff": 2, "burst": 2}),
    Arm("exclusive-reorder-threads", "exclusive-reorder", ["--threads"], process_arm="exclusive-reorder"),
    Arm("lt", "lt", when_stopped="others", reload_loses_none=True, studies="reload diagnosis"),
    Arm("lt-threads", "lt", ["--threads"], process_arm="lt"),
    Arm("lt-yield", "lt-yield", when_stopped="others", reload_loses_none=True,
        studies="placement timeline reload", place={"placement": 3}),
    Arm("lt-yield-threads", "lt-yield", ["--threads"], process_arm="lt-yield"),
    # Every worker blocked in accept() on one blocking listener (php-fpm's
    # children): one connection at a time, one answer each.
    Arm("blocking", "blocking", when_stopped="others", reload_loses_none=True,
        studies="cost:bench payoff perturbation reload diagnosis",
        not_applicable={"balancing:keepalive": ONE_REQUEST, "perturbation:keepalive": ONE_REQUEST}),
    Arm("blocking-threads", "blocking", ["--threads"], process_arm="blocking",
        not_applicable={"balancing:keepalive": ONE_REQUEST}),
    Arm("reuseport", "reuseport", when_stopped="queued",
        studies="quick cost:bench payoff burst quick:burst placement placement:workers timeline perturbation respawn "
                "respawn+migrate reload reload+migrate diagnosis quick:diagnosis",
        place={"cost": 10, "payoff": 3, "burst": 3, "placement": 4, "perturbation": 4}),
    Arm("reuseport-threads", "reuseport", ["--threads"], process_arm="reuseport"),
    Arm("reuseport-bpf", "reuseport-bpf", needs_root=True, when_stopped="queued", claims_balance=True,
        reference="reuseport",
        studies="quick cost payoff burst perturbation quick:perturbation respawn respawn+migrate reload "
                "reload+migrate diagnosis",
        place={"cost": 11, "payoff": 4, "burst": 4, "perturbation": 3}),
    Arm("reuseport-bpf-threads", "reuseport-bpf", ["--threads"], needs_root=True, process_arm="reuseport-bpf"),
    Arm("mutex", "mutex", when_stopped="stall", reload_loses_none=True, studies="reload slowview diagnosis"),
    Arm("mutex-threads", "mutex", ["--threads"], process_arm="mutex"),
    Arm("mutex-strict", "mutex", ["--accept-mutex-strict"], when_stopped="stall", reload_loses_none=True,
        studies="quick cost:bench payoff reload slowview", place={"cost": 13, "payoff": 5}),
    Arm("mutex-strict-threads", "mutex", ["--accept-mutex-strict", "--threads"], process_arm="mutex-strict"),
    Arm("fdpass", "fdpass", knob_off="fdpass-off", reference="reuseport-bpf", when_stopped="queued",
        reload_loses_none=True, acceptor_is_not_owner=True, claims_balance=True,
        studies="quick cost quick:cost cost:one_worker payoff quick:payoff burst quick:burst placement "
                "quick:placement placement:workers timeline perturbation quick:perturbation slowview reload "
                "reload+spawn quick:reload+spawn diagnosis",
        place={"cost": 3, "payoff": 6, "burst": 5, "placement": 5, "perturbation": 1}),
    Arm("fdpass-threads", "fdpass", ["--threads"], knob_off="fdpass-off-threads", process_arm="fdpass",
        acceptor_is_not_owner=True, studies="cost:bench", place={"cost": 6}),
    Arm("fdpass-off", "fdpass", env=SHARE_OFF, same_mechanism="bare", measurement_only=True,
        studies="quick cost quick:cost payoff quick:payoff burst quick:burst perturbation",
        place={"cost": 2, "payoff": 7, "burst": 6, "perturbation": 2}),
    Arm("fdpass-off-threads", "fdpass", ["--threads"], env=SHARE_OFF, process_arm="fdpass-off",
        measurement_only=True),
    # handoff runs in threads mode only; "handoff" is the server's default
    # policy (open), "handoff-written" the note's rule as written,
    # "handoff-off" its knob-off arm (plain reuseport).
    Arm("handoff", "handoff", ["--threads"], knob_off="handoff-off", acceptor_is_not_owner=True,
        claims_balance=True, studies="quick cost:bench payoff burst placement perturbation diagnosis",
        place={"cost": 8, "payoff": 8, "burst": 7, "placement": 7, "perturbation": 5}),
    Arm("handoff-written", "handoff", ["--threads", "--handoff-policy", "written"], acceptor_is_not_owner=True,
        measurement_only=True),
    Arm("handoff-off", "handoff", ["--threads", "--handoff-policy", "off"], process_arm="reuseport",
        same_mechanism="reuseport", measurement_only=True, studies="cost:bench payoff burst perturbation",
        place={"cost": 7, "payoff": 9, "burst": 8, "perturbation": 6}),
    # The balancers with their load counted in user space (what runs without
    # BPF), for the cost study: beside the kernel-counted arm and the knob-off
    # arm in the same rounds, they show what kernel accounting costs.
    Arm("fdpass-user", "fdpass", env=USER_ACCOUNTING, knob_off="fdpass-off", default=False,
        studies="cost", place={"cost": 4}),
    # fdpass with every worker woken per connection (the herd: edge
    # triggered, with deferral), for the cost study: beside fdpass (one
    # worker woken) and its knob-off arm in the same rounds, it shows what
    # the herd costs the mechanism.
    Arm("fdpass-herd", "fdpass", env=HERD_WAKE, knob_off="fdpass-off", reference="reuseport-bpf",
        default=False, studies="cost", place={"cost": 4}),
    Arm("handoff-user", "handoff", ["--threads"], env=USER_ACCOUNTING, knob_off="handoff-off", default=False,
        studies="cost:bench", place={"cost": 9}),
]
_BY_NAME = {a.name: a for a in TABLE}
_INDEX = {a.name: i for i, a in enumerate(TABLE)}


def names():
    """Every arm, in the table's order."""
    return list(_BY_NAME)


def get(name):
    """The arm called name (KeyError naming it when there is none)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError("no arm %r in acceptlab/arms.py" % name) from None


def server_args(name):
    return get(name).server_args


def env(name):
    """The arm's environment, or None when it has none."""
    return dict(get(name).env) or None


def where(**fields):
    """The arms whose fields have these values, in the table's order."""
    return [a.name for a in TABLE if all(getattr(a, k) == v for k, v in fields.items())]


def _ordered(arms, study):
    return [a.name for a in sorted(arms, key=lambda a: (a.place.get(study, len(TABLE)), _INDEX[a.name]))]


def _base(word):
    """The study a membership word orders by: "quick:cost" and "cost:one_worker" -> "cost"."""
    return word.split(":", 1)[1] if word.startswith("quick:") else word.split(":", 1)[0]


def in_study(word):
    """The arms a study (or a membership word such as "quick:cost") includes,
    in the study's order."""
    return _ordered([a for a in TABLE if word in a.studies], _base(word))


def default_arms():
    """The campaign's --arms default: every arm but those that run in the cost study alone."""
    return where(default=True)


def claiming_balance():
    """The arms that hold the balancing target, in the perturbation study's order."""
    return _ordered([a for a in TABLE if a.claims_balance], "perturbation")


def needing_root():
    return set(where(needs_root=True))


def knob_off_of():
    """{arm: its knob-off arm}."""
    return {a.name: a.knob_off for a in TABLE if a.knob_off}


def reference_of():
    """{arm: the reference arm cost compares it with (not a knob-off arm)}."""
    return {a.name: a.reference for a in TABLE if a.reference}


def process_arm_of():
    """{arm: the process-mode arm cost compares it with}."""
    return {a.name: a.process_arm for a in TABLE if a.process_arm}


def aa_of():
    """{A/A arm: the arm it measures again}."""
    return {a.name: a.aa_of for a in TABLE if a.aa_of}


def same_mechanism_pairs():
    """((arm, the arm whose mechanism it runs), ...), in the table's order."""
    return tuple((a.name, a.same_mechanism) for a in TABLE if a.same_mechanism)


def respawn_cases():
    """[(arm, migrate), ...]: the respawn study's trials, in the table's order."""
    return [(a.name, migrate) for a in TABLE
            for migrate, word in ((False, "respawn"), (True, "respawn+migrate")) if word in a.studies]


RELOAD_CASES = ((False, False, "reload"), (True, False, "reload+migrate"), (False, True, "reload+spawn"))


def reload_cases(quick=False):
    """[(arm, migrate, spawn), ...]: the reload study's trials (--quick's with
    quick), those that must lose nothing first, each group in the table's order."""
    prefix = "quick:" if quick else ""
    ordered = sorted(TABLE, key=lambda a: (not a.reload_loses_none, _INDEX[a.name]))
    return [(a.name, migrate, spawn) for a in ordered
            for migrate, spawn, word in RELOAD_CASES if prefix + word in a.studies]


def not_applicable(name, study, shape):
    """Why a study's shape does not apply to an arm, or None when it does."""
    return get(name).not_applicable.get("%s:%s" % (study, shape))


def study_words():
    """Every membership word the table uses."""
    return sorted({w for a in TABLE for w in a.studies})


def balancing_wide():
    """The arms the balancing study runs at its wider worker counts: those
    users serve with (process mode, no knob-off or measurement arm), and the
    threads-only balancers (handoff), in the table's order."""
    return [a.name for a in TABLE if a.default and not a.measurement_only
            and (a.mode == "process" or (a.claims_balance and not a.process_arm))]


# What a run records of each arm in its meta.json ("arms"), so that the report
# renders the run from the run alone: renaming or re-pairing an arm here later
# does not change how an old run reads. report/common.py reads these (the
# report never imports this table); keep the two in step.
FACT_PARTNERS = ("knob_off", "reference", "process_arm", "aa_of", "same_mechanism")
FACT_FLAGS = ("claims_balance", "acceptor_is_not_owner", "reload_loses_none")


def meta_facts(names):
    """{arm: its facts} for meta.json's "arms": each arm of names, and every
    arm one of them names as a partner (so each partner is there too):

      order                   its place in this table (the report's order
                              of the arms where no study orders them)
      variant, mode, options, env
                              the server that made it (the worker count aside)
      knob_off, reference, process_arm, aa_of, same_mechanism
                              its partners (an arm's name, or null)
      claims_balance, acceptor_is_not_owner, reload_loses_none
                              what it claims (true or false)
      in_study                {word: its place among the arms with that study
                              word}, for every study word it has
    """
    wanted, todo = set(), list(names)
    while todo:
        arm = get(todo.pop())
        if arm.name not in wanted:
            wanted.add(arm.name)
            todo += [getattr(arm, p) for p in FACT_PARTNERS if getattr(arm, p)]
    facts = {}
    for a in TABLE:
        if a.name not in wanted:
            continue
        facts[a.name] = {"order": _INDEX[a.name], "variant": a.variant, "mode": a.mode,
                         "options": list(a.options), "env": dict(a.env),
                         **{p: getattr(a, p) for p in FACT_PARTNERS},
                         **{f: getattr(a, f) for f in FACT_FLAGS},
                         "in_study": {w: in_study(w).index(a.name) for w in sorted(a.studies)}}
    return facts
