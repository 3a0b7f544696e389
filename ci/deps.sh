#!/bin/sh
# ci/deps.sh: installs the Debian packages acceptlab needs that are missing.
# As root it runs apt-get (update first); otherwise it prints what it would
# install and what will be skipped, and exits 0 so a non-root build can go on
# with what is there. Prints nothing when everything is present.
set -eu

PACKAGES="gcc make clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev wrk gnuplot-nox \
python3 python3-matplotlib python3-pytest python3-numpy iproute2 procps bpftrace linux-perf nginx libnginx-mod-http-perl haproxy nodejs stress-ng help2man dpkg-dev"

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
# nginx and haproxy (the peers) must not start their own services on port
# 80: a policy-rc.d that denies starts, for this install only, unless the
# machine has one already.
policy=/usr/sbin/policy-rc.d
made=""
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy" && made=1
	trap 'rm -f "$policy"' EXIT
fi
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq $missing
