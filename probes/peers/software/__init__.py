"""The server softwares the peers and the census start: one module each,
one Software subclass (base.py says what it implements). SOFTWARE maps the
software's key to an instance, in the census's order; CONFIGS every
configuration name to (software key, setting)."""

import importlib

from probes.peers.software.base import Software

# module -> class, in the order the census runs them.
MODULES = (("nginx", "Nginx"), ("haproxy", "Haproxy"), ("node", "Node"), ("apache", "Apache"),
           ("gunicorn", "Gunicorn"), ("uwsgi", "Uwsgi"), ("lighttpd", "Lighttpd"), ("h2o", "H2o"),
           ("caddy", "Caddy"), ("puma", "Puma"), ("unicorn", "Unicorn"), ("phpfpm", "PhpFpm"),
           ("varnish", "Varnish"))


def _load():
    found = []
    for module, cls in MODULES:
        try:
            found.append(getattr(importlib.import_module("probes.peers.software." + module), cls)())
        except ModuleNotFoundError as e:
            if e.name != "probes.peers.software." + module:
                raise
    return found


SOFTWARE = {s.name: s for s in _load()}
CONFIGS = {name: (s.name, setting) for s in SOFTWARE.values() for name, setting in s.configs.items()}
assert all(isinstance(s, Software) for s in SOFTWARE.values())
