"""The server softwares the peers and the census start: one module each,
one Software subclass (base.py says what it implements). SOFTWARE maps the
software's key to an instance; CONFIGS every configuration name to
(software key, setting)."""

from probes.peers.software.haproxy import Haproxy
from probes.peers.software.nginx import Nginx
from probes.peers.software.node import Node

SOFTWARE = {s.name: s for s in (Nginx(), Haproxy(), Node())}
CONFIGS = {name: (s.name, setting) for s in SOFTWARE.values() for name, setting in s.configs.items()}
