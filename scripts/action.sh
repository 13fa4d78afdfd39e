#!/usr/bin/env bash
# The GitHub Action's step (action.yml): install ssrisk in a virtual environment of its own,
# then check. Inputs come as INPUT_* environment variables; GitHub's files as GITHUB_*.
#   INPUT_PATHS       files and directories, separated by whitespace
#   INPUT_ARGS        more `ssrisk check` options, separated by whitespace
#   INPUT_SARIF_FILE  the SARIF report to write
#   INPUT_SUMMARY     "true": write the Markdown summary to GITHUB_STEP_SUMMARY
#   INPUT_HELM        "true": install Helm's engine (the `helm` extra)
#   INPUT_INSTALL     what pip installs instead of this checkout (a wheel, a pinned version)
# Writes `exit-code=N` to GITHUB_OUTPUT; exits 0 itself, so the SARIF is uploaded first.
set -euo pipefail

action_path="${GITHUB_ACTION_PATH:?}"
venv="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ssrisk-venv"
spec="${INPUT_INSTALL:-}"
if [ -z "$spec" ]; then
  spec="$action_path"
  [ "${INPUT_HELM:-true}" = "true" ] && spec="$spec[helm]"
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$spec"

read -r -d '' -a paths <<<"${INPUT_PATHS:-.}" || true
read -r -d '' -a args <<<"${INPUT_ARGS:-}" || true
outputs=(--format github --format sarif --output "${INPUT_SARIF_FILE:-ssrisk.sarif}")
if [ "${INPUT_SUMMARY:-true}" = "true" ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  outputs+=(--format markdown --output "$GITHUB_STEP_SUMMARY")
fi

code=0
errors="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ssrisk-stderr"
"$venv/bin/ssrisk" check "${args[@]}" "${outputs[@]}" -- "${paths[@]}" 2> >(tee "$errors" >&2) \
  || code=$?
wait  # (tee)
if [ ! -f "${INPUT_SARIF_FILE:-ssrisk.sarif}" ]; then
  # ssrisk stopped before any report (a configuration or usage error): say why as an
  # annotation, escaped as a workflow command's data
  why="$(head -c 2000 "$errors" | tr -d '\r')"
  why="${why//'%'/'%25'}"
  why="${why//$'\n'/'%0A'}"
  echo "::error title=ssrisk could not check::${why:-exit $code, see the log}"
fi
echo "exit-code=$code" >>"${GITHUB_OUTPUT:-/dev/null}"
