#!/usr/bin/env bash
# Installs PostgreSQL and Redis from Debian's packages when they are missing (as root, or
# through sudo). Services are never started by the packages: the scale-out stack starts its
# own servers on free loopback ports with throw-away data directories.
set -euo pipefail

missing=()
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
command -v redis-server >/dev/null || [ -x /usr/bin/redis-server ] || missing+=(redis-server)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ]; then SUDO=(); else SUDO=(sudo); fi
echo "Installing ${missing[*]} from Debian's packages"

# Debian's maintainer scripts start a freshly installed service through invoke-rc.d unless
# policy-rc.d forbids it (exit 101). Forbid it for this install only, when nothing else does.
policy=/usr/sbin/policy-rc.d
added_policy=
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null
    "${SUDO[@]}" chmod 755 "$policy"
    added_policy=1
fi
cleanup() { if [ -n "$added_policy" ]; then "${SUDO[@]}" rm -f "$policy"; fi; }
trap cleanup EXIT

"${SUDO[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
