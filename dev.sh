#!/usr/bin/env bash
# The project's two entry points, each doing its own set-up (idempotent):
#   ./dev.sh demo [ARGS]   the main job (a cluster takes acks=all records and gives them back)
#   ./dev.sh test [ARGS]   ruff, then the whole test suite (pytest ARGS)
# Set-up: Debian packages (Docker engine, debootstrap, Maven, Java 17, libfuse2, and Chromium for the
# report test) when missing and we are root, a running Docker engine, and a virtualenv in .venv
# with the pinned packages.
set -euo pipefail
cd "$(dirname "$0")"
export TESTCONTAINERS_RYUK_DISABLED=true

say() { echo "dev.sh: $*" >&2; }

need_packages() {
  # $1 = browser: the test suite also needs Chromium (the report's browser test).
  local missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v docker >/dev/null || missing+=(docker.io)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  command -v iptables >/dev/null || missing+=(iptables)
  command -v java >/dev/null || missing+=(openjdk-17-jre-headless)
  command -v javac >/dev/null || missing+=(openjdk-17-jdk-headless)  # --client java's driver
  command -v mvn >/dev/null || missing+=(maven)
  /sbin/ldconfig -p 2>/dev/null | grep -q 'libfuse\.so\.2' || missing+=(libfuse2)  # --disk fsync-tracked
  if [ "${1:-}" = browser ]; then
    command -v chromium >/dev/null || missing+=(chromium)
  fi
  python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
  printf '%s\n' "${missing[@]}" | sort -u | grep -v '^$' || true
}

install_packages() {
  local pkgs
  pkgs=$(need_packages "${1:-}")
  [ -z "$pkgs" ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    say "missing: $(echo $pkgs); install them (Debian: apt-get install $(echo $pkgs)) and run again"
    exit 2
  fi
  say "installing $(echo $pkgs)"
  apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >/dev/null
}

start_engine() {
  if docker info >/dev/null 2>&1; then return 0; fi
  if [ "$(id -u)" != 0 ]; then
    say "no Docker engine running; start one (sudo systemctl start docker) and run again"
    exit 2
  fi
  say "starting dockerd"
  nohup dockerd >/var/log/kafka-chaos-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && return 0
    sleep 1
  done
  say "dockerd did not answer within 60 s; see /var/log/kafka-chaos-dockerd.log"
  exit 1
}

make_venv() {
  # Reinstall when the dependencies or the set of packages change (an editable install maps
  # the packages it found when it ran).
  local stamp=.venv/.installed want
  want=$(cat pyproject.toml; ls -d -- */__init__.py 2>/dev/null)
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
  fi
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    say "installing Python packages into .venv"
    .venv/bin/pip install -q --upgrade pip >/dev/null
    .venv/bin/pip install -q -e '.[dev]'
    printf '%s' "$want" > "$stamp"
  fi
}

setup() {
  install_packages "${1:-}"
  start_engine
  make_venv
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  demo)
    setup
    exec .venv/bin/kafka-chaos demo "$@"
    ;;
  test)
    setup browser
    .venv/bin/ruff check .
    .venv/bin/ruff format --check .
    exec .venv/bin/pytest "$@"
    ;;
  setup)
    setup
    ;;
  *)
    echo "usage: ./dev.sh demo [kafka-chaos demo options] | ./dev.sh test [pytest options] | ./dev.sh setup" >&2
    exit 2
    ;;
esac
