"""The server softwares the peers and the census start: one module each,
one Software subclass (base.py says what it implements). SOFTWARE maps the
software's key to an instance, in the census's order; CONFIGS every
configuration name to (software key, setting)."""

from probes.peers.software.apache import Apache
from probes.peers.software.base import Software
from probes.peers.software.caddy import Caddy
from probes.peers.software.gunicorn import Gunicorn
from probes.peers.software.h2o import H2o
from probes.peers.software.haproxy import Haproxy
from probes.peers.software.lighttpd import Lighttpd
from probes.peers.software.nginx import Nginx
from probes.peers.software.node import Node
from probes.peers.software.phpfpm import PhpFpm
from probes.peers.software.puma import Puma
from probes.peers.software.unicorn import Unicorn
from probes.peers.software.uwsgi import Uwsgi
from probes.peers.software.varnish import Varnish

# In the order the census runs them.
SOFTWARE = {s.name: s for s in (Nginx(), Haproxy(), Node(), Apache(), Gunicorn(), Uwsgi(), Lighttpd(), H2o(),
                                Caddy(), Puma(), Unicorn(), PhpFpm(), Varnish())}
CONFIGS = {name: (s.name, setting) for s in SOFTWARE.values() for name, setting in s.configs.items()}
assert all(isinstance(s, Software) for s in SOFTWARE.values())
