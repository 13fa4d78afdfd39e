"""Helm's embedded engine (``helm-python-sdk``), run as a child process.

:mod:`ssrisk.renderers.helm` starts ``python -I -c ...`` that calls :func:`main`, under the
limits of :mod:`ssrisk.renderers.bounded`: the engine is Helm's Go library loaded into that
child, so a template that loops, recurses or allocates without end is stopped by killing the
child, which a library call in ssrisk's own process could not be.

Protocol: one JSON request on standard input, ``{"chart": dir, "namespace": ns, "release":
name, "values_files": [[shown name, text], ...], "set": [expr, ...]}``; one JSON answer on
standard output, ``{"manifests": {template name: text}}`` or ``{"error": message}``.

This module imports nothing from the rest of ssrisk, so the child starts quickly.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any


def merge_into(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``override`` into ``base`` key by key; nested maps merge, anything else is
    replaced (helm pkg/cli/values/options.go, mergeMaps)."""
    for key, value in override.items():
        current = base.get(key)
        if isinstance(value, Mapping) and isinstance(current, dict):
            merge_into(current, value)
        else:
            base[key] = value
    return base


def _detail(exc: Exception) -> str:
    detail = str(getattr(exc, "detail", "") or exc).strip()
    return " ".join(detail.split()) or type(exc).__name__


def render(request: Mapping[str, Any]) -> dict[str, Any]:
    """Answer one request (see the module); errors are answers, not exceptions."""
    import helm_python

    values: dict[str, Any] | None = None
    try:
        if request.get("values_files") or request.get("set"):
            values = {}
            for shown, text in request.get("values_files") or []:
                try:
                    merge_into(values, helm_python.values_from_yaml(text))
                except helm_python.HelmError as exc:
                    return {"error": f"values file {shown}: {_detail(exc)}"}
            for expr in request.get("set") or []:
                try:
                    merge_into(values, helm_python.parse_set_string(expr))
                except helm_python.HelmError as exc:
                    return {"error": f"--set {expr}: {_detail(exc)}"}
        with helm_python.Chart.load(request["chart"]) as chart:
            missing = _missing_dependencies(chart)
            if missing:
                # helm pkg/cmd/install.go, runInstall, calls action.CheckDependencies
                # (pkg/action/install.go) before rendering, for `helm template` too
                return {
                    "error": "an error occurred while checking for chart dependencies; run "
                    "'helm dependency build' to fetch missing dependencies: found in "
                    f"Chart.yaml, but missing in charts/ directory: {', '.join(missing)}"
                }
            manifests = _render(chart, values, request)
    except helm_python.HelmError as exc:
        return {"error": _detail(exc)}
    return {"manifests": manifests}


def _render(chart: Any, values: dict[str, Any] | None, request: Mapping[str, Any]) -> Any:
    """The chart rendered as an install of ``request["release"]`` in its namespace, with
    ``.Capabilities`` of the checked Kubernetes version. helm-python-sdk 0.2's
    ``Chart.render`` passes no KubeVersion or APIVersions, but its native render takes them
    among its options (``kube_version``, ``api_versions``: helm-c-sdk's render options, which
    set the action's KubeVersion and APIVersions as ``helm template --kube-version
    --api-versions`` does); without them, or without that entry point, ``Chart.render``."""
    name, namespace = request["release"], request["namespace"]
    kube, apis = request.get("kube_version") or "", list(request.get("api_versions") or [])
    if kube or apis:
        try:
            from helm_python import _native
            from helm_python.chart import _dumps
        except ImportError:  # another helm-python-sdk layout: Helm's offline defaults
            pass
        else:
            opts = {"name": name, "namespace": namespace, "kube_version": kube}
            if apis:
                opts["api_versions"] = apis
            rendered = _native.call_string(
                "helm_render", chart._raw(), _dumps(values), json.dumps(opts)
            )
            return json.loads(rendered)
    return chart.render(values, name=name, namespace=namespace)


def _missing_dependencies(chart: Any) -> list[str]:
    """Dependencies that ``Chart.yaml`` declares and ``charts/`` does not hold, by name."""
    declared = chart.metadata.get("dependencies") or []
    present = {str(d.get("name")) for d in chart.dependencies if isinstance(d, Mapping)}
    return [
        str(d.get("name"))
        for d in declared
        if isinstance(d, Mapping) and str(d.get("name")) not in present
    ]


def main() -> None:
    """Read a request from standard input, write the answer to standard output."""
    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    try:
        answer = render(request)
    except MemoryError:
        sys.stderr.write("MemoryError: the Helm engine ran out of memory\n")
        sys.exit(3)
    sys.stdout.write(json.dumps(answer))
    sys.stdout.flush()


if __name__ == "__main__":  # pragma: no cover - started by ssrisk.renderers.helm
    main()
