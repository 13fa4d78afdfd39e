"""Documents of kinds ssrisk does not model are only checked for syntax, by libyaml alone."""

from __future__ import annotations

import pytest
import yaml
from conftest import DATA

from ssrisk.loading import load_path


def test_the_syntax_pass_makes_no_event_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("yaml.parse builds a Python object per event")

    monkeypatch.setattr(yaml, "parse", refuse)
    bad = load_path(str(DATA / "bad" / "badsyntax-configmap.yaml"))
    assert [(e.line, e.column) for e in bad.errors] == [(7, 1)]
    assert "YAML syntax" in bad.errors[0].message and "quoted scalar" in bad.errors[0].message
    good = load_path(str(DATA / "perf" / "context" / "deploy" / "others.yaml"))
    assert good.errors == [] and good.skipped_kinds == 2 and len(good.objects) == 1
