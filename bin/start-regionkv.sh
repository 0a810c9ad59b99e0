#!/usr/bin/env bash
# The README's first command, as HBase's bin/start-hbase.sh is its
# standalone quick start: installs what the standalone server needs if it is
# missing (Debian's zookeeper package, which pulls in Java), then runs
# `go run ./cmd/regionsrv serve --standalone` in the foreground (Ctrl-C or
# SIGTERM stops it). Data goes to /tmp/regionkv-$USER unless --data-dir (or
# hbase.rootdir) says otherwise; other arguments go to serve too, e.g.
#   bash bin/start-regionkv.sh --data-dir ~/regionkv -D hbase.regionserver.port=16021
# Run it as root, or as a user who can sudo.
set -euo pipefail
cd "$(dirname "$0")/.."
me=start-regionkv

command -v go >/dev/null 2>&1 || export PATH=$PATH:/usr/local/go/bin
if ! command -v go >/dev/null 2>&1; then
	echo "$me: Go is not installed: install Go $(sed -n 's/^go //p' go.mod) or later (https://go.dev/doc/install)" >&2
	exit 1
fi

# internal/zkserver runs this jar; REGIONKV_ZOOKEEPER_JAR points elsewhere.
jar=${REGIONKV_ZOOKEEPER_JAR:-/usr/share/java/zookeeper.jar}
if [ ! -f "$jar" ]; then
	sudo=
	if [ "$(id -u)" -ne 0 ]; then
		if ! command -v sudo >/dev/null 2>&1; then
			echo "$me: Debian's zookeeper is not installed, and installing it needs root: run 'apt-get install zookeeper' as root, then this again" >&2
			exit 1
		fi
		sudo=sudo
	fi
	echo "$me: installing Debian's zookeeper package (it pulls in Java)..." >&2
	$sudo apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zookeeper
fi

exec go run ./cmd/regionsrv serve --standalone "$@"
