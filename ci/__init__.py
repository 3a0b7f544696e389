"""ci: the gate (`make gate`, python3 -m ci.gate) and CI's helpers
(deps.sh; .ci/run calls `make test`)."""
