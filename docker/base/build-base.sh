#!/usr/bin/env bash
# Build the Java 17 base image from Debian packages, for hosts that cannot pull eclipse-temurin.
#
# Usage: build-base.sh IMAGE_TAG [WORKDIR]
# The mirror and suite come from the host's own apt configuration, so the build uses
# whatever Debian mirror (or snapshot) this machine is already set up for.
set -euo pipefail

tag=${1:?usage: build-base.sh IMAGE_TAG [WORKDIR]}
work=${2:-$(mktemp -d)}
suite=${KAFKA_CHAOS_DEBIAN_SUITE:-bookworm}
packages=openjdk-17-jre-headless,iproute2,iptables,procps,ca-certificates

mirror=${KAFKA_CHAOS_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
  # deb822 sources first (Debian 12 default), then the one-line format.
  mirror=$(grep -h -E '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null \
            | awk '{print $2}' | grep -v -- '-security' | head -n1 || true)
fi
if [ -z "$mirror" ]; then
  mirror=$(grep -h -E '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
            | awk '{print $2}' | grep -v -- '-security' | head -n1 || true)
fi
if [ -z "$mirror" ]; then
  echo "build-base: no Debian mirror found in the host's apt configuration; set KAFKA_CHAOS_DEBIAN_MIRROR" >&2
  exit 2
fi
command -v debootstrap >/dev/null || { echo "build-base: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 2; }

rootfs="$work/rootfs"
rm -rf "$rootfs"
mkdir -p "$rootfs"
echo "build-base: debootstrap $suite from $mirror into $rootfs" >&2
debootstrap --variant=minbase --include="$packages" "$suite" "$rootfs" "$mirror" >&2
# Keep the image small: no apt lists, caches or docs.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
       "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*
tar -C "$rootfs" --numeric-owner -c . \
  | docker import \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'ENV LANG=C.UTF-8' \
      --change 'LABEL org.kafka-chaos.role=base' \
      - "$tag" >&2
rm -rf "$rootfs"
echo "$tag"
