#!/usr/bin/env bash
# Create (or confirm up to date) the separate target virtualenvs the tests and audits use:
#   bash scripts/ci_envs.sh            # every env with a file in dpcheck/targets/envs/
#   bash scripts/ci_envs.sh synthcity  # just these
# Idempotent: an env already built from the same requirements file is left alone (~1 s).
# Envs live under $DPCHECK_ENV_DIR (default ~/.cache/dpcheck/envs). Needs .venv (dpcheck installed).
set -euo pipefail
cd "$(dirname "$0")/.."
# uv installs the pinned files in parallel (synthcity: ~1.5 min instead of ~17 with pip); optional
.venv/bin/pip install -q uv || echo "uv not installed: envs are created with pip (slower)"
names=("$@")
if [ "${#names[@]}" -eq 0 ]; then
  mapfile -t names < <(.venv/bin/dpcheck env list --names)
fi
for name in "${names[@]}"; do
  start=$(date +%s)
  .venv/bin/dpcheck env create "$name"
  echo "env $name: $(( $(date +%s) - start )) s"
done
