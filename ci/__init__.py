"""ci: the gate (`make gate`, python3 -m ci.gate), the tables rendered from
the server (python3 -m ci.server_tables), the arms' facts for a run measured
before meta.json recorded them (python3 -m ci.add_arm_facts), and CI's
helpers (deps.sh; .ci/run calls `make test`)."""
