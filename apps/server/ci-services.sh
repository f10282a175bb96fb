#!/usr/bin/env bash
# PostgreSQL and Redis for the apps/server scale-out tests (issue 11).
# Uses the servers of the machine when they answer on 127.0.0.1:5432 and 127.0.0.1:6379;
# otherwise installs Debian's postgresql and redis-server when missing, and starts them.
# The tests connect as postgres@127.0.0.1 without a password, create and drop their own
# database, and use their own Redis key prefix.
set -euo pipefail

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

pg_up() {
  command -v pg_isready >/dev/null 2>&1 && pg_isready -q -h 127.0.0.1 -p 5432
}
redis_up() {
  command -v redis-cli >/dev/null 2>&1 && [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = "PONG" ]
}

missing=()
if ! pg_up; then
  command -v pg_ctlcluster >/dev/null 2>&1 || missing+=(postgresql)
fi
if ! redis_up; then
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "ci-services: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

if ! pg_up; then
  version="$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)"
  if [ -z "$version" ]; then
    echo "ci-services: no PostgreSQL cluster found under /etc/postgresql" >&2
    exit 1
  fi
  hba="/etc/postgresql/$version/main/pg_hba.conf"
  # Loopback trust for the test user, as on the development machines (tests only).
  if ! $SUDO grep -Eq '^host\s+all\s+all\s+127\.0\.0\.1/32\s+trust' "$hba"; then
    $SUDO sed -i '1i host all all 127.0.0.1/32 trust' "$hba"
  fi
  echo "ci-services: starting PostgreSQL $version"
  $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main start || $SUDO service postgresql start
  for _ in $(seq 1 60); do pg_up && break; sleep 0.5; done
fi

if ! redis_up; then
  echo "ci-services: starting redis-server"
  $SUDO redis-server --bind 127.0.0.1 --port 6379 --daemonize yes --save '' --appendonly no
  for _ in $(seq 1 60); do redis_up && break; sleep 0.5; done
fi

pg_up || { echo "ci-services: PostgreSQL does not answer on 127.0.0.1:5432" >&2; exit 1; }
redis_up || { echo "ci-services: Redis does not answer on 127.0.0.1:6379" >&2; exit 1; }
echo "ci-services: PostgreSQL and Redis answer on 127.0.0.1"
