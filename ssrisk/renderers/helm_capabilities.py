"""What a chart's ``.Capabilities`` answer for the Kubernetes version being checked.

``helm install`` fills ``.Capabilities.KubeVersion`` and ``.Capabilities.APIVersions`` from the
cluster (pkg/action/action.go#getCapabilities: the server version and the discovery API's
group versions and ``group/version/Kind`` resources); ``helm template`` offline answers with
its own defaults (pkg/chart/common/capabilities.go#DefaultCapabilities: a fixed Kubernetes
version and group versions without kinds), so a chart that gates its PodDisruptionBudget on
``.Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget"`` renders without it, and
``semverCompare`` branches take the wrong side. ssrisk renders as an install on the checked
version would: ``--kube-version`` (or the configuration's ``kube-version``) is the
KubeVersion, and the API versions are that version's built-in resources, read from the
Kubernetes OpenAPI schemas that ``kubernetes-validate`` ships (each resource's
``x-kubernetes-group-version-kind``), plus ``--api-versions`` (CRD groups, as ``helm template
--api-versions`` takes them).

Alpha versions are left out: the API server serves none of them unless enabled.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

#: A resource definition's name: ``io.k8s.api.<group>.<version>.<Kind>`` (built-in groups;
#: ``io.k8s.kube-aggregator...`` and ``io.k8s.apiextensions-apiserver...`` likewise).
_RESOURCE = re.compile(r"^io\.k8s\.(?!apimachinery\.)[\w.-]+\.(v\d+(?:(?:alpha|beta)\d+)?)\.(\w+)$")


def kube_version_tag(kube_version: str) -> str:
    """``.Capabilities.KubeVersion`` for ``1.NN`` or ``1.NN.P``: ``v1.NN.0`` or ``v1.NN.P``."""
    parts = kube_version.split(".")
    return "v" + ".".join([*parts, "0"][:3])


@lru_cache(maxsize=4)
def builtin_api_versions(kube_version: str) -> tuple[str, ...]:
    """The group versions and ``group/version/Kind`` resources a cluster of ``kube_version``
    serves by default (``v1``, ``v1/Pod``, ``policy/v1``, ``policy/v1/PodDisruptionBudget``,
    ...), from the schemas of the newest shipped minor not newer than it; ``()`` when the
    schemas cannot be read (the render then answers as ``helm template`` does)."""
    from ..validation import schema_minor, schema_root

    try:
        folder = schema_root() / f"v1.{schema_minor(kube_version)}.0-local"
        data = json.loads((folder / "_definitions.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RuntimeError):
        return ()
    defs = data.get("$defs") or data.get("definitions") or {}
    found: set[str] = set()
    for name, schema in defs.items():
        matched = _RESOURCE.match(name)
        if matched is None or not isinstance(schema, dict) or "alpha" in matched.group(1):
            continue
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            if not isinstance(gvk, dict) or gvk.get("kind") != matched.group(2):
                continue
            group, version = str(gvk.get("group") or ""), str(gvk.get("version") or "")
            if version != matched.group(1):
                continue
            gv = f"{group}/{version}" if group else version
            found.update((gv, f"{gv}/{gvk['kind']}"))
    return tuple(sorted(found))
