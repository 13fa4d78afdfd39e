"""A finding's references as links: where a reader can check the behaviour it cites.

Rules cite their sources in short forms (the rules' pages and ``references`` use them):

* ``k8s: pkg/controller/podgc/gc_controller.go#gcOrphaned``: a file of kubernetes/kubernetes,
  linked at the release branch of the checked Kubernetes version (``release-1.33``), where
  that version's code is;
* ``web: docs/concepts/workloads/pods/disruptions.md (Title)``: a page of kubernetes.io
  (the website's ``content/en`` path; ``blog/...`` too), or ``web: host.tld/path`` elsewhere;
* ``KEP-2268 (...)``: the enhancement's tracking issue (kubernetes/enhancements, whose issue
  numbers are the KEP numbers);
* ``owner/repo#123``: a GitHub issue or pull request (GitHub redirects an issue link to the
  pull request).

Any other form has no link (``None``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from .embedded_sim.lazyre import lazy

_K8S = lazy(r"^k8s:\s*([\w./-]+?\.\w+)(?:[#,\s].*)?$")
_WEB = lazy(r"^web:\s*(\S+?)(?:\s.*)?$")
_KEP = lazy(r"^KEP-(\d+)\b")
_ISSUE = lazy(r"^([\w.-]+)/([\w.-]+)#(\d+)\b")


@functools.lru_cache(maxsize=4096)  # (a run cites a few hundred references, each many times)
def reference_url(reference: str, kube_version: str) -> str | None:
    """The link of one reference (see the module), ``kube_version`` as ``1.NN[.P]``.

    Returns:
        an ``https://`` URL, or ``None`` for a form without one.
    """
    m = _K8S.match(reference)
    if m:
        minor = ".".join(kube_version.split(".")[:2])
        return f"https://github.com/kubernetes/kubernetes/blob/release-{minor}/{m.group(1)}"
    m = _WEB.match(reference)
    if m:
        path = m.group(1).split("#", 1)
        target = path[0].removesuffix(".md").removesuffix("/_index")
        anchor = f"#{path[1]}" if len(path) > 1 else ""
        if "." in target.split("/", 1)[0]:  # another site: host.tld/path
            return f"https://{target}{anchor}"
        return f"https://kubernetes.io/{target.strip('/')}/{anchor}"
    m = _KEP.match(reference)
    if m:
        return f"https://github.com/kubernetes/enhancements/issues/{m.group(1)}"
    m = _ISSUE.match(reference)
    if m:
        return f"https://github.com/{m.group(1)}/{m.group(2)}/issues/{m.group(3)}"
    return None


def reference_urls(references: Sequence[str], kube_version: str) -> list[str | None]:
    """:func:`reference_url` of each reference, in order."""
    return [reference_url(r, kube_version) for r in references]
