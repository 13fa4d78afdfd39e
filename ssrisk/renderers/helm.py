"""Rendering a Helm chart directory the way ``helm template`` does, offline.

With the ``helm`` binary on ``PATH`` ssrisk runs ``helm template``; otherwise it uses Helm's
own Go library through the ``helm-python-sdk`` package (``pip install 'ssrisk[helm]'``).
Either way the release is named ``release-name`` (helm pkg/cmd/template.go, newTemplateCmd:
``client.ReleaseName = "release-name"``) and ``.Release.Namespace`` is ``--namespace``.

Values: the chart's ``values.yaml``, then each ``--values FILE`` in order, then each
``--set key=value``, later ones winning key by key (helm pkg/cli/values/options.go,
Options.MergeValues). Findings point at the template file that produced the object
(``Position.source`` is the template name Helm reports, e.g. ``mychart/templates/sts.yaml``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..loading import LoadedFile, has_content, load_text, read_text
from ..model import InputError
from .common import RenderError, display_path, error, rendered, run_tool, split_by_source
from .locate import TemplateLocator

RELEASE_NAME = "release-name"
CHART_FILE = "Chart.yaml"
INSTALL_HINT = (
    "install the helm binary (https://helm.sh/docs/intro/install/) or the Helm engine "
    "for Python: pip install 'ssrisk[helm]'"
)


@dataclass(frozen=True)
class HelmOptions:
    """``--values FILE`` (in order) and ``--set key=value`` (in order) for every chart."""

    values_files: tuple[str, ...] = ()
    set_values: tuple[str, ...] = ()


def is_chart(directory: str) -> bool:
    """True when ``directory`` holds a ``Chart.yaml`` (a Helm chart)."""
    return os.path.isfile(os.path.join(directory, CHART_FILE))


def render_chart(
    chart_dir: str, namespace: str, options: HelmOptions = HelmOptions()
) -> list[LoadedFile]:
    """Render ``chart_dir`` and load every object, one :class:`LoadedFile` per template.

    Returns:
        The loaded templates; when Helm is missing or the chart does not render, a single
        :class:`LoadedFile` whose one error names the chart directory and the cause.
    """
    try:
        manifests = render_manifests(chart_dir, namespace, options)
    except RenderError as exc:
        return [error(chart_dir, f"cannot render Helm chart: {exc}")]
    out = []
    for template, text in sorted(manifests.items()):
        out.append(_load_template(chart_dir, template, text, namespace))
    return out


def render_manifests(chart_dir: str, namespace: str, options: HelmOptions) -> dict[str, str]:
    """``{template name: rendered text}`` for every template that produced output.

    Partials (``_*.tpl``), ``NOTES.txt`` and templates that render to nothing are left out,
    as Helm leaves them out of a release (helm pkg/release/v1/util/manifest_sorter.go,
    SortManifests; pkg/action/action.go, renderResources). So are templates that render to
    comments only (a licence header above a disabled ``{{ if }}``): Helm keeps those in the
    release, but they hold no object and kubectl applies nothing from them.

    Raises:
        RenderError: no renderer is available, a values file cannot be read or the chart
            does not render (the message is Helm's).
    """
    helm = shutil.which("helm")
    if helm is not None:
        argv = [helm, "template", RELEASE_NAME, os.path.abspath(chart_dir), "-n", namespace]
        for f in options.values_files:
            argv += ["--values", f]
        for s in options.set_values:
            argv += ["--set", s]
        manifests = split_by_source(run_tool(argv))
    else:
        manifests = _render_with_sdk(chart_dir, namespace, options)
    return {
        name: text
        for name, text in manifests.items()
        if name
        and not os.path.basename(name).startswith("_")
        and not name.endswith("NOTES.txt")
        and has_content(text)
    }


def _render_with_sdk(chart_dir: str, namespace: str, options: HelmOptions) -> dict[str, str]:
    try:
        import helm_python
    except ImportError:
        raise RenderError(f"no Helm renderer found; {INSTALL_HINT}") from None
    except Exception as exc:  # the embedded Go library failed to load (HelmLibraryError)
        raise RenderError(f"the Helm engine could not be loaded ({exc}); {INSTALL_HINT}") from None
    try:
        values = merged_values(options, helm_python)
        with helm_python.Chart.load(os.path.abspath(chart_dir)) as chart:
            result: dict[str, str] = chart.render(values, name=RELEASE_NAME, namespace=namespace)
            return result
    except helm_python.HelmError as exc:
        raise RenderError(_helm_detail(exc)) from None


def _helm_detail(exc: Exception) -> str:
    detail = str(getattr(exc, "detail", "") or exc).strip()
    return " ".join(detail.split()) or type(exc).__name__


def merged_values(options: HelmOptions, helm_python: Any) -> dict[str, Any] | None:
    """User values from ``--values`` files and ``--set`` expressions, merged in order.

    Raises:
        RenderError: a values file cannot be read or parsed, or a ``--set`` is malformed.
    """
    if not options.values_files and not options.set_values:
        return None
    values: dict[str, Any] = {}
    for path in options.values_files:
        text, err = read_text(path)
        if err is not None or text is None:
            raise RenderError(f"values file {path}: {err.message if err else 'cannot read'}")
        try:
            merge_into(values, helm_python.values_from_yaml(text))
        except helm_python.HelmError as exc:
            raise RenderError(f"values file {path}: {_helm_detail(exc)}") from None
    for expr in options.set_values:
        try:
            merge_into(values, helm_python.parse_set_string(expr))
        except helm_python.HelmError as exc:
            raise RenderError(f"--set {expr}: {_helm_detail(exc)}") from None
    return values


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


def template_file(chart_dir: str, template: str) -> str:
    """The file of ``template`` (``mychart/charts/sub/templates/x.yaml``) under ``chart_dir``:
    the first component is the chart's name, the rest is the path inside the chart."""
    parts = template.split("/")
    return os.path.join(chart_dir, *parts[1:]) if len(parts) > 1 else chart_dir


def _load_template(chart_dir: str, template: str, text: str, namespace: str) -> LoadedFile:
    file_path = template_file(chart_dir, template)
    shown = display_path(os.path.abspath(file_path), chart_dir)
    chart_shown = display_path(os.path.abspath(chart_dir), chart_dir)
    lf = load_text(text, shown, namespace)
    # errors are in the rendered text, whose lines are not the template's
    lf.errors = [
        InputError(
            e.path,
            f"{e.message} (in the rendered output of {template}"
            + (f", line {e.line})" if e.line is not None else ")"),
        )
        for e in lf.errors
    ]
    source, _ = read_text(file_path) if os.path.isfile(file_path) else (None, None)
    seen: dict[str, int] = {}
    objects = []
    for obj in lf.objects:
        ordinal = seen.get(obj.kind, 0)
        seen[obj.kind] = ordinal + 1
        locator = TemplateLocator(source, shown, obj.kind, ordinal) if source else None
        objects.append(rendered(obj, source=template, locator=locator, chart=chart_shown))
    lf.objects = list(objects)
    return lf


def describe_renderer() -> Sequence[str]:
    """What would render charts on this machine (for messages and tests)."""
    found = []
    if shutil.which("helm"):
        found.append("helm binary")
    try:
        import helm_python  # noqa: F401

        found.append("helm-python-sdk")
    except Exception:  # missing, or its embedded library does not load here
        pass
    return found
