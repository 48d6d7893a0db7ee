#!/bin/sh
# `make` for a machine that may not have make yet (minimal Debian images and containers lack
# it): installs make from Debian's archive when it is missing, then runs it with the same
# arguments.  `make deps` (which `make run` and `make test` depend on) installs the rest.
set -e
cd "$(dirname "$0")"
if ! command -v make >/dev/null 2>&1; then
	if [ "$(id -u)" != 0 ]; then
		echo "make.sh: make is not installed; run as root (sudo ./make.sh $*) to install it" >&2
		exit 1
	fi
	echo "installing: make"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends make
fi
exec make "$@"
