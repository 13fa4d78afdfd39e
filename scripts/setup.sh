#!/usr/bin/env bash
# Creates .venv and installs ssrisk (editable) with its development tools.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
# -W: setuptools' notice that every editable install prints ("Editable installation ... folders
# with the same name as your package may take precedence") is not a problem of this checkout.
.venv/bin/python -W "ignore:Editable installation:UserWarning" -m pip install --quiet \
  --disable-pip-version-check -e '.[dev]'
