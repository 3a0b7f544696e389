#!/bin/sh
# ci/deps.sh: installs the Debian packages acceptlab needs that are missing.
# As root it runs apt-get (update first); otherwise it prints what it would
# install and what will be skipped, and exits 0 so a non-root build can go on
# with what is there. Prints nothing when everything is present.
set -eu

PACKAGES="gcc make clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev wrk gnuplot-nox \
python3 python3-matplotlib python3-pytest python3-numpy iproute2 procps bpftrace linux-perf nginx libnginx-mod-http-perl haproxy nodejs stress-ng help2man dpkg-dev \
apache2 gunicorn uwsgi uwsgi-plugin-python3 lighttpd h2o caddy puma unicorn php8.2-fpm libfcgi-bin varnish"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: not root, so NOT installing:$missing"
	echo "deps: as root run: apt-get update && apt-get install -y$missing"
	echo "deps: builds and tests that need these will fail or skip"
	exit 0
fi
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
# The servers the peers and the census run (nginx, haproxy, apache2, ...)
# must not start their own services on port 80: a policy-rc.d that denies
# starts, for this install only, unless the machine has one already. Nor
# are they left enabled: every service, socket or timer of a package this
# install added is disabled after it (systemd's and System V's links).
policy=/usr/sbin/policy-rc.d
before=$(mktemp)
after=$(mktemp)
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy"
	trap 'rm -f "$policy" "$before" "$after"' EXIT
else
	trap 'rm -f "$before" "$after"' EXIT
fi
dpkg-query -W -f='${Package}\n' | sort > "$before"
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq $missing
dpkg-query -W -f='${Package}\n' | sort > "$after"
for pkg in $(comm -13 "$before" "$after"); do
	for f in $(dpkg -L "$pkg" 2>/dev/null | grep -E '^/(usr/)?lib/systemd/system/[^/]+\.(service|socket|timer)$'); do
		systemctl disable --quiet "$(basename "$f")" 2>/dev/null || true
	done
	for f in $(dpkg -L "$pkg" 2>/dev/null | grep -E '^/etc/init\.d/[^/]+$'); do
		update-rc.d -f "$(basename "$f")" disable >/dev/null 2>&1 || true
	done
done
