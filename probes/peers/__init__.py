"""probes.peers: servers nobody here wrote, measured by the same probe
(peers.py; python3 -m probes.peers.peers), and cluster.js, the Node.js
cluster it starts."""
