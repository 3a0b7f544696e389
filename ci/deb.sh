#!/bin/sh
# ci/deb.sh OUTDIR: builds the Debian package of acceptlab's tools
# (acceptlab-tools: the programs `make install` installs, each with its man
# page, and the diagnosis's advice file, share/acceptlab/advice.tsv, from
# report/advice.tsv or make's ADVICE) from bin/ and build/man/, which
# `make deb` builds first. The package
# holds no compiler, header or Python: its Depends are the shared libraries
# the programs link, as dpkg-shlibdeps finds them. Writes
# OUTDIR/acceptlab-tools_VERSION_ARCH.deb and prints its path.
set -eu

out=${1:?usage: ci/deb.sh OUTDIR}
: "${VERSION:?VERSION unset (make deb sets it)}"
: "${PROGRAMS:?PROGRAMS unset (make deb sets it)}"
arch=$(dpkg --print-architecture)
pkg=acceptlab-tools
stage=$out/stage
rm -rf "$stage"
mkdir -p "$stage/DEBIAN"
make -s install DESTDIR="$stage" PREFIX=/usr
# The advice acceptlab-diagnose reads (../share/acceptlab/advice.tsv from
# /usr/bin): said when the package goes without it.
[ -f "$stage/usr/share/acceptlab/advice.tsv" ] ||
	echo "deb: no advice file in the package: acceptlab-diagnose will say it has no advice" >&2
# Debian policy: man pages compressed, a copyright file under /usr/share/doc.
strip --strip-unneeded "$stage"/usr/bin/*
gzip -9n "$stage"/usr/share/man/man1/*.1
mkdir -p "$stage/usr/share/doc/$pkg"
cat > "$stage/usr/share/doc/$pkg/copyright" <<EOC
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: acceptlab
Files: *
Copyright: the acceptlab developers
License: BSD-2-Clause OR GPL-2.0-only
 The eBPF programs embedded in the binaries carry the same dual licence
 (their SEC("license") is "Dual BSD/GPL").
EOC

# The shared libraries' packages, from a scratch debian/control (dpkg-shlibdeps
# reads one from its working directory).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/debian"
printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$pkg" "$pkg" > "$tmp/debian/control"
args=""
for p in $PROGRAMS; do args="$args -e$(pwd)/$stage/usr/bin/$p"; done
# shellcheck disable=SC2086
depends=$(cd "$tmp" && dpkg-shlibdeps -O $args 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
size=$(du -sk "$stage" | cut -f1)

cat > "$stage/DEBIAN/control" <<EOC
Package: $pkg
Version: $VERSION
Architecture: $arch
Maintainer: acceptlab developers <acceptlab@invalid>
Installed-Size: $size
Depends: $depends
Section: net
Priority: optional
Description: which worker of a server gets each TCP connection, and why
 acceptlab-diagnose tells, for a running server found by its port, which
 process and thread accepts and serves each connection, by which sharing
 mechanism (shared listener or SO_REUSEPORT group, epoll flags, BPF
 steering, hand-offs), whether the split is beyond chance, and what
 acceptlab's measured run found for the same mechanism and its
 alternatives (share/acceptlab/advice.tsv).
 acceptlab-trace says why each worker won (eBPF), acceptlab-probe loads a
 server in the shapes that expose skew, and acceptlab-server is the
 harness with every accept variant. Tracing needs root.
EOC
(cd "$stage" && find usr -type f -exec md5sum {} + > DEBIAN/md5sums)
deb=$out/${pkg}_${VERSION}_${arch}.deb
dpkg-deb --root-owner-group --build "$stage" "$deb" >/dev/null
rm -rf "$stage"
echo "$deb"
