#!/usr/bin/env bash
# bench/client_vs_wire.py's one system dependency: Debian's tcpdump (run as root; capturing on lo
# also needs root or CAP_NET_RAW). The pcap reader, scapy, comes with the `test` extra.
set -euo pipefail
if command -v tcpdump >/dev/null 2>&1; then echo "tcpdump: $(command -v tcpdump)"; exit 0; fi
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tcpdump >/dev/null
tcpdump --version
