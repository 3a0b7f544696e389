"""A Node.js cluster (probes/peers/cluster.js, no npm packages): worker
processes that answer their process.pid; the primary's scheduling policy
from NODE_CLUSTER_SCHED_POLICY."""

import json
import os

from probes.peers.software.base import Software, version_line

CLUSTER_JS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cluster.js")


class Node(Software):
    name = "node"
    binary = "node"
    packages = ("nodejs",)
    answers_pid = True
    truth = "/pid answers"
    configs = {"node-rr": "rr", "node-none": "none"}
    settings = {"rr": "NODE_CLUSTER_SCHED_POLICY=rr", "none": "NODE_CLUSTER_SCHED_POLICY=none"}

    def version(self):
        return version_line([self.path(), "--version"], r"(v\S+)", "node/")

    def command(self, setting, d, port, workers, access_log=True):
        return [self.path(), CLUSTER_JS, str(port), str(workers)], {"NODE_CLUSTER_SCHED_POLICY": setting}

    def workers(self, proc, d, workers):
        """The pids cluster.js's ready line names."""
        try:
            with open(os.path.join(d, "stdout.log")) as f:
                for line in f:
                    if '"event":"ready"' in line:
                        return [(p, p) for p in json.loads(line)["pids"]]
        except (OSError, ValueError):
            pass
        return None

    def ready_extra(self, d):
        """The policy the primary reports (its ready line)."""
        try:
            with open(os.path.join(d, "stdout.log")) as f:
                for line in f:
                    if '"event":"ready"' in line:
                        return {"policy": json.loads(line).get("policy")}
        except (OSError, ValueError):
            pass
        return {}
