"""peers: nginx, HAProxy and a Node.js cluster, measured exactly as
`-m probes.peers.peers measure` does (its measure_one(), one step per peer
configuration) -> peers.jsonl."""

import os

from probes.harness.lifecycle import StepFailed
from probes.peers import peers

NAME = "peers"
# Not in a campaign unless asked (--studies peers, make peers): the census
# (probes/studies/census.py) runs the same servers, diagnosed by the kernel.
NOT_BY_DEFAULT = True
# --quick: nginx's default configuration only (the default: every
# configuration peers.py knows; unavailable ones are a row saying why).
QUICK_PEERS = ["nginx-default"]
PEER_ROUNDS = 2  # rounds per shape in the campaign (at most --rounds); `make peers` runs its own


def rounds(plan):
    return min(plan.rounds, PEER_ROUNDS)


def peers_of(plan):
    """--peers, else QUICK_PEERS with --quick, else every configuration peers.py knows."""
    return list(plan.peers or (QUICK_PEERS if plan.quick else peers.PEERS))


def peer_configs(plan):
    return peers_of(plan)


def arms_of(plan):
    """None of the table's: the peers are other people's servers."""
    return []


def meta(plan):
    if NAME not in plan.studies:
        return {}
    return {"peers": {
        "peers": peers_of(plan), "rounds": rounds(plan), "workers": peers.WORKERS, "shapes": peers.SHAPES,
        "trace": plan.peers_trace,
        "how": "probes/peers/peers.py measure_one() per peer: the peer started once on 127.0.0.1 and a free "
               "port, every shape run against it, then stopped; as root acceptlab-trace --port runs beside "
               "it once, across all its shapes; nginx's access log ($pid per request) checked against the "
               "probe's counts after every shape"}}


def steps(plan, raw_dir):
    """One step per peer configuration, measured by peers.measure_one (as
    `peers.py measure` does): a peer that cannot be had is an "unavailable"
    row with the reason; one that fails keeps the rows it made."""
    for name in peers_of(plan):
        def step(name=name):
            rows = []
            status, texts = peers.measure_one(name, rounds(plan), plan.peers_trace,
                                              os.path.join(raw_dir, "peers-" + name), rows.append)
            if status == "failed":
                raise StepFailed("; ".join(texts), rows)
            return rows, "; ".join(texts)
        yield name, step, {"kind": "error", "peer": name}
