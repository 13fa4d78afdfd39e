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

import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..loading import LoadedFile, has_content, load_text, read_text, record_comments
from ..model import InputError, Notice, Position
from ..settings import DEFAULT_RELEASE_NAME
from .bounded import Limits, run_bounded, scrubbed_environment
from .chartcopy import Skipped, copy_chart
from .common import RenderError, display_path, error, rendered, split_by_source
from .helm_schema import check_chart_schemas
from .locate import TemplateLocator

RELEASE_NAME = DEFAULT_RELEASE_NAME
#: Files left out of a chart's copy are listed one by one up to this many.
MAX_SKIPPED_NOTICES = 20
INSTALL_HINT = (
    "install the helm binary (https://helm.sh/docs/intro/install/) or the Helm engine "
    "for Python: pip install 'ssrisk[helm]'"
)


@dataclass(frozen=True)
class HelmOptions:
    """``--values FILE`` (in order) and ``--set key=value`` (in order) for every chart, and
    the limits of each render."""

    values_files: tuple[str, ...] = ()
    set_values: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    #: The Kubernetes version checked (``1.NN[.P]``): ``.Capabilities.KubeVersion``, and whose
    #: built-in resources answer ``.Capabilities.APIVersions`` (:mod:`.helm_capabilities`);
    #: ``""``: Helm's offline defaults.
    kube_version: str = ""
    #: More API versions for ``.Capabilities.APIVersions`` (``--api-versions``: CRD groups).
    api_versions: tuple[str, ...] = ()
    #: ``.Release.Name`` (the configuration's ``release``).
    release: str = RELEASE_NAME
    #: The configured variant rendered (``""``: none), put on every object and position.
    variant: str = ""
    #: Where the configuration writes its ``set`` values (dotted key -> position).
    set_positions: tuple[tuple[str, Position], ...] = ()
    #: How many of ``set_values`` (the last ones) come from the command line's ``--set``.
    command_line_sets: int = 0

    def capabilities(self) -> tuple[str, tuple[str, ...]]:
        """``(KubeVersion as v1.NN.P, API versions)`` of the render (``("", extra)`` without a
        version)."""
        from .helm_capabilities import builtin_api_versions, kube_version_tag

        if not self.kube_version:
            return "", self.api_versions
        builtin = builtin_api_versions(self.kube_version)
        return kube_version_tag(self.kube_version), (*builtin, *self.api_versions)


def render_chart(
    chart_dir: str, namespace: str, options: HelmOptions = HelmOptions()
) -> list[LoadedFile]:
    """Render ``chart_dir`` and load every object, one :class:`LoadedFile` per template.

    The chart is rendered from a private copy (:mod:`ssrisk.renderers.chartcopy`); each file
    left out of the copy (a link out of the chart, ``.git``) is a warning naming it.

    Returns:
        The loaded templates; when Helm is missing or the chart does not render, a
        :class:`LoadedFile` whose error names the chart directory and the cause.
    """
    skipped: list[Skipped] = []
    sources: dict[str, tuple[str, str]] = {}
    values: list[tuple[str, str]] = []
    of_variant = f" (variant {options.variant})" if options.variant else ""
    try:
        manifests = render_manifests(chart_dir, namespace, options, skipped, sources, values)
    except RenderError as exc:
        out = [error(chart_dir, f"cannot render Helm chart{of_variant}: {exc}")]
        if exc.at is not None:  # at the template's line Helm names
            out[0].errors = [InputError(exc.at[0], out[0].errors[0].message, *exc.at[1:])]
    else:
        placed = _values_data(values)
        set_keys = frozenset(k for expr in options.set_values for k in _set_keys(expr))
        # (a key the command line's --set gives too is the command line's: no file line)
        cli = options.set_values[len(options.set_values) - options.command_line_sets :]
        cli_keys = {k for expr in cli for k in _set_keys(expr)}
        set_at = {k: pos for k, pos in options.set_positions if k not in cli_keys}
        out = [
            _load_template(
                chart_dir,
                template,
                text,
                namespace,
                sources.get(template),
                options.variant,
                placed,
                set_keys,
                set_at,
            )
            for template, text in sorted(manifests.items())
        ]
    if skipped:
        notices = out[0].notices if out else []
        for item in skipped[:MAX_SKIPPED_NOTICES]:
            notices.append(
                Notice(
                    display_path(os.path.join(os.path.abspath(chart_dir), item.path), chart_dir),
                    f"not given to Helm: {item.reason}",
                    level="warning",
                )
            )
        if len(skipped) > MAX_SKIPPED_NOTICES:
            notices.append(
                Notice(
                    chart_dir,
                    f"{len(skipped) - MAX_SKIPPED_NOTICES} more files not given to Helm",
                    level="warning",
                )
            )
        if not out:
            lf = LoadedFile(chart_dir)
            lf.notices = notices
            out.append(lf)
    return out


def render_manifests(
    chart_dir: str,
    namespace: str,
    options: HelmOptions,
    skipped: list[Skipped] | None = None,
    sources: dict[str, tuple[str, str]] | None = None,
    values_read: list[tuple[str, str]] | None = None,
) -> dict[str, str]:
    """``{template name: rendered text}`` for every template that produced output.

    Partials (``_*.tpl``), ``NOTES.txt`` and templates that render to nothing are left out,
    as Helm leaves them out of a release (helm pkg/release/v1/util/manifest_sorter.go,
    SortManifests; pkg/action/action.go, renderResources). So are templates that render to
    comments only (a licence header above a disabled ``{{ if }}``): Helm keeps those in the
    release, but they hold no object and kubectl applies nothing from them.
    The chart is copied first (what was left out is appended to ``skipped``) and rendered
    in a bounded child process (:mod:`ssrisk.renderers.bounded`). With ``sources``, each
    template's file as shown and its text are put there, read from that copy (never from
    the chart directory, whose links may lead anywhere).

    Before either renderer runs, every ``values.schema.json`` of the copy (subcharts and
    packed subcharts included) must refer only to itself (:mod:`.helm_schema`).

    Raises:
        RenderError: no renderer is available, a values file cannot be read, a schema refers
            outside itself (``at`` the schema file), the chart does not render (the message
            is Helm's) or the renderer passed a limit.
    """
    helm = shutil.which("helm")
    if helm is None:
        try:
            import helm_python  # noqa: F401  (only to know it is there: it runs in a child)
        except ImportError:
            raise RenderError(f"no Helm renderer found; {INSTALL_HINT}") from None
        except Exception as exc:  # the embedded Go library failed to load (HelmLibraryError)
            raise RenderError(
                f"the Helm engine could not be loaded ({exc}); {INSTALL_HINT}"
            ) from None
    values = [(path, _read_values(path)) for path in options.values_files]
    if values_read is not None:
        values_read.extend(values)
    with tempfile.TemporaryDirectory(prefix="ssrisk-helm-") as tmp:
        private = os.path.join(tmp, "home")
        os.mkdir(private)
        copy, left_out = copy_chart(chart_dir, os.path.join(tmp, "chart"))
        if skipped is not None:
            skipped.extend(left_out)
        # Helm's schema compiler would open any file or URL a schema names: refused first
        check_chart_schemas(copy, chart_dir)
        env = scrubbed_environment(private)
        try:
            if helm is not None:
                argv = [helm, "template", options.release, copy, "-n", namespace]
                kube, apis = options.capabilities()
                if kube:
                    argv += ["--kube-version", kube]
                for api in apis:
                    argv += ["--api-versions", api]
                for i, (_path, text) in enumerate(values):
                    copied = os.path.join(tmp, f"values-{i}.yaml")
                    with open(copied, "w", encoding="utf-8") as fh:
                        fh.write(text)
                    argv += ["--values", copied]
                for expr in options.set_values:
                    argv += ["--set", expr]
                out = run_bounded(argv, what="helm", cwd=private, env=env, limits=options.limits)
                manifests = split_by_source(out)
            else:
                manifests = _render_with_engine(copy, namespace, values, options, private, env)
        except RenderError as exc:
            message = str(exc).replace(copy, chart_dir)
            raise RenderError(message, _error_place(message, copy, chart_dir)) from None
        if sources is not None:
            sources.update(_template_sources(copy, chart_dir, manifests))
    return {
        name: text
        for name, text in manifests.items()
        if name
        and not os.path.basename(name).startswith("_")
        and not name.endswith("NOTES.txt")
        and has_content(text)
    }


def _read_values(path: str) -> str:
    """A ``--values`` file's text, read only inside its tree (:mod:`ssrisk.confine`)."""
    from ..confine import refusal, tree_of

    refused = refusal(path, tree_of(path))
    if refused is not None:
        raise RenderError(f"values file {path}: {refused}")
    text, err = read_text(path)
    if err is not None or text is None:
        raise RenderError(f"values file {path}: {err.message if err else 'cannot read'}")
    _check_values(path, text)
    return text


def _check_values(path: str, text: str) -> None:
    """Refuse a values file Helm would refuse, at the place ssrisk's reader finds the fault
    (Helm's own message names a line of its JSON conversion, and Go types): a YAML error, or
    a document that is not a mapping of values.

    Raises:
        RenderError: ``at`` the file, line and column.
    """
    import yaml

    from ..yamlpos import YamlInputError, load_documents

    try:
        docs = list(load_documents(text))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
        raise RenderError(
            f"values file {path}: YAML syntax: {exc.problem}", (path, line, col)
        ) from None
    except (yaml.YAMLError, YamlInputError) as exc:
        raise RenderError(f"values file {path}: {exc}", (path, None, None)) from None
    data = docs[0][0] if docs else None
    if data is not None and not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else "a single value"
        raise RenderError(
            f"values file {path}: {kind}, not a mapping of values (key: value)", (path, 1, 1)
        )


def _set_keys(expression: str) -> list[str]:
    """The key paths a ``--set`` expression sets (``a.b=1,c=2`` → ``a.b``, ``c``; helm
    pkg/strvals: assignments are separated by unescaped commas; a list index ends the path)."""
    return [
        re.split(r"[=\[]", part, maxsplit=1)[0]
        for part in re.split(r"(?<!\\),", expression)
        if "=" in part
    ]


def _values_data(values: Sequence[tuple[str, str]]) -> list[tuple[str, object]]:
    """The values files' first documents with positions (those Helm read without error; a
    file that is not a mapping places nothing)."""
    from ..yamlpos import load_documents

    out: list[tuple[str, object]] = []
    for path, text in values:
        try:
            data = next(iter(load_documents(text)), (None, []))[0]
        except Exception:  # Helm read it; a form this reader refuses places nothing
            continue
        if isinstance(data, dict):
            out.append((path, data))
    return out


def _render_with_engine(
    chart: str,
    namespace: str,
    values: list[tuple[str, str]],
    options: HelmOptions,
    private: str,
    env: dict[str, str],
) -> dict[str, str]:
    """Render with Helm's embedded engine in a bounded child (:mod:`.helm_engine`)."""
    kube, apis = options.capabilities()
    request = {
        "chart": chart,
        "namespace": namespace,
        "release": options.release,
        "values_files": values,
        "set": list(options.set_values),
        "kube_version": kube,
        "api_versions": list(apis),
    }
    # -I: the child ignores PYTHON* variables and does not put its working directory (or the
    # user's) on sys.path; the directory this ssrisk was imported from is put there instead.
    code = (
        f"import sys; sys.path.insert(0, {_package_parent()!r}); "
        "from ssrisk.renderers.helm_engine import main; main()"
    )
    out = run_bounded(
        [sys.executable, "-I", "-c", code],
        what="the Helm engine",
        cwd=private,
        env=env,
        stdin=json.dumps(request).encode("utf-8"),
        limits=options.limits,
    )
    try:
        answer = json.loads(out)
    except ValueError:
        raise RenderError("the Helm engine gave no answer") from None
    if "error" in answer:
        raise RenderError(str(answer["error"]))
    manifests: dict[str, str] = answer["manifests"]
    return {name: helm_split_text(text) for name, text in manifests.items()}


def helm_split_text(text: str) -> str:
    r"""A template's raw output as ``helm template`` prints it, line for line: Helm splits the
    rendered text at every ``---`` that starts a line and trims each document
    (pkg/releaseutil/manifest.go#SplitManifests: ``(?:^|\s*\n)---\s*``, then
    ``strings.TrimSpace``), so a ``---#note`` separates documents and an indented first line
    is read from its first character. The embedded engine returns the text before that step;
    this makes the same two changes without moving any line (a blank is put after such a
    ``---``, a document's first line with content loses its indentation), so positions still
    map back to the template. One pass over the lines."""
    lines = text.split("\n")
    first = True  # the next line with content is a document's first
    for i, line in enumerate(lines):
        if line.startswith("---"):
            if len(line) > 3 and not line[3].isspace() and line[3] != "-":
                lines[i] = "--- " + line[3:]
            first = True
            continue
        if first and line.strip():
            lines[i] = line.lstrip(" \t")
            first = False
    return "\n".join(lines)


def _package_parent() -> str:
    import ssrisk

    return os.path.dirname(os.path.dirname(os.path.abspath(ssrisk.__file__)))


def _chart_name(directory: str) -> str | None:
    """The ``name`` of the ``Chart.yaml`` in ``directory`` (a chart of the private copy)."""
    from ..yamlpos import load_documents

    text, err = read_text(os.path.join(directory, "Chart.yaml"))
    if text is None or err is not None:
        return None
    try:
        data = next((d for d, _ in load_documents(text) if d is not None), None)
    except Exception:  # Helm reports a broken Chart.yaml
        return None
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name else None


#: Where Helm's message names a template line: ``parse error at (pg/templates/x.yaml:20)``,
#: ``execution error at (pg/templates/x.yaml:20:18)`` (text/template's ErrorContext, and
#: Helm's ``required``/``fail``), ``template: pg/templates/x.yaml:20:25: executing ...`` or
#: ``pg/templates/x.yaml:20:25 executing`` (text/template's ExecError).
_TEMPLATE_PLACE = re.compile(
    r"(?:^|[\s(])(?P<template>[\w.-]+(?:/charts/[\w.-]+)*/templates/[^\s():]+)"
    r":(?P<line>\d+)(?::(?P<column>\d+))?"
)


def _error_place(message: str, copy: str, chart_dir: str) -> tuple[str, int, int | None] | None:
    """``(template file as shown, line, column)`` of the first template line ``message``
    (Helm's, for the chart ``chart_dir`` rendered from ``copy``) names, when that template is
    a file of the chart; else ``None``."""
    found = _TEMPLATE_PLACE.search(message)
    if found is None:
        return None
    file = _chart_file(_charts_by_name(copy), found["template"])
    if file is None or not os.path.isfile(file):
        return None
    original = os.path.join(os.path.abspath(chart_dir), os.path.relpath(file, copy))
    column = int(found["column"]) if found["column"] else None
    return display_path(original, chart_dir), int(found["line"]), column


def _charts_by_name(copy: str) -> dict[str, str]:
    """``{chart path as Helm names it: its directory}`` for the chart ``copy`` and its
    unpacked subcharts.

    Helm names a template after the *names* of its chart and subcharts
    (``top/charts/sub/templates/x.yaml``: helm pkg/chart/chart.go, ChartFullPath, uses
    ``Metadata.Name``), which need not be their directory names; a packed subchart
    (``charts/x.tgz``) has no directory."""
    by_path: dict[str, str] = {}
    pending: list[tuple[str, str | None]] = [(copy, None)]
    while pending:
        directory, parent = pending.pop()
        name = _chart_name(directory)
        if name is None:
            continue
        path = name if parent is None else f"{parent}/charts/{name}"
        by_path.setdefault(path, directory)
        charts = os.path.join(directory, "charts")
        if os.path.isdir(charts):
            for sub in sorted(os.listdir(charts)):
                if os.path.isdir(os.path.join(charts, sub)):
                    pending.append((os.path.join(charts, sub), path))
    return by_path


def _chart_file(by_path: dict[str, str], template: str) -> str | None:
    """The file of the template Helm names ``template``, in the charts ``by_path``."""
    prefix = max((p for p in by_path if template.startswith(p + "/")), key=len, default=None)
    if prefix is None:
        return None
    return os.path.join(by_path[prefix], *template[len(prefix) + 1 :].split("/"))


def _template_sources(
    copy: str, chart_dir: str, manifests: dict[str, str]
) -> dict[str, tuple[str, str]]:
    """``{template name: (its file as shown, its text)}``, read from the chart's copy
    (:func:`_charts_by_name`); a template of a packed subchart has no file."""
    by_path = _charts_by_name(copy)
    out: dict[str, tuple[str, str]] = {}
    for template in manifests:
        file = _chart_file(by_path, template)
        if file is None or not os.path.isfile(file):
            continue
        text, err = read_text(file)
        if text is None or err is not None:
            continue
        original = os.path.join(os.path.abspath(chart_dir), os.path.relpath(file, copy))
        out[template] = (display_path(original, chart_dir), text)
    return out


def template_file(chart_dir: str, template: str) -> str:
    """The file of ``template`` (``mychart/charts/sub/templates/x.yaml``) under ``chart_dir``:
    the first component is the chart's name, the rest is the path inside the chart."""
    parts = template.split("/")
    return os.path.join(chart_dir, *parts[1:]) if len(parts) > 1 else chart_dir


def _load_template(
    chart_dir: str,
    template: str,
    text: str,
    namespace: str,
    source: tuple[str, str] | None = None,
    variant: str = "",
    values: Sequence[tuple[str, object]] = (),
    set_keys: frozenset[str] = frozenset(),
    set_at: Mapping[str, Position] | None = None,
) -> LoadedFile:
    """The objects of one rendered template; ``source`` is the template's file as shown and
    its text, read from the chart's copy (``None``: unknown, positions stay in the
    rendered text); ``variant`` the configured variant rendered; ``values`` the user's values
    files with positions (:class:`.locate.TemplateLocator`)."""
    shown = (
        source[0]
        if source is not None
        else display_path(os.path.abspath(template_file(chart_dir, template)), chart_dir)
    )
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
    body = source[1] if source is not None else None
    # suppression comments are the template's, at its lines (not the rendered text's)
    lf.ignore_comments = {}
    record_comments(lf, shown, body)
    seen: dict[str, int] = {}
    objects = []
    for obj in lf.objects:
        ordinal = seen.get(obj.kind, 0)
        seen[obj.kind] = ordinal + 1
        locator = (
            TemplateLocator(body, shown, obj.kind, ordinal, values, set_keys, set_at)
            if body
            else None
        )
        objects.append(
            rendered(
                obj,
                source=template,
                locator=locator,
                unit=chart_shown,
                by="chart",
                variant=variant,
            )
        )
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
