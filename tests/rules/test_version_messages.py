"""Rule messages follow ``--kube-version`` (feature gates) and the configured cluster profile.

Numbers are compared with the simulator's own defaults and results, never with copies of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, ROOT, run_cli
from ssrisk.embedded_sim import ClusterProfile

from ssrisk.timeline import fmt_duration

POSTGRES = ROOT / "examples" / "postgres.yaml"
RULES = DATA / "rules"
CATCH_ALL = RULES / "eviction-disabled-by-toleration" / "fail-case-catch-all.yaml"
DEFAULTS = ClusterProfile()


def check(path: Path, *args: str, cwd: Path | None = None) -> list[dict[str, Any]]:
    """The findings of ``ssrisk check --format json [args] path`` (run from ``cwd``)."""
    run = run_cli("check", "--format", "json", *args, str(path), cwd=cwd)
    assert run.code in (0, 1), run.out + run.err
    report = run.json()
    assert report["errors"] == [], report["errors"]
    findings: list[dict[str, Any]] = report["findings"]
    return findings


def message(findings: list[dict[str, Any]], rule: str) -> str:
    (hit,) = [f for f in findings if f["rule"] == rule]
    return str(hit["message"])


def explanation(findings: list[dict[str, Any]], rule: str) -> str:
    """The explanation of the one ``rule`` finding, whitespace collapsed (it is wrapped)."""
    (hit,) = [f for f in findings if f["rule"] == rule]
    return " ".join(str(hit["explanation"]).split())


def simulate(path: Path, scenario: str, kube_version: str) -> dict[str, Any]:
    run = run_cli(
        "simulate", "--format", "json", "--kube-version", kube_version, "--scenario", scenario,
        str(path),
    )  # fmt: skip
    assert run.code == 0, run.err
    (result,) = run.json()["results"]
    assert isinstance(result, dict)
    return result


def config(tmp_path: Path, text: str) -> Path:
    (tmp_path / ".ssrisk.yaml").write_text(text, encoding="utf-8")
    return tmp_path


# --- the out-of-service taint needs NodeOutOfServiceVolumeDetach (off in 1.25, on from 1.26) ---


def notes(path: Path, *args: str, cwd: Path | None = None) -> dict[str, str]:
    """The run notes of ``ssrisk check --format json [args] path``, by rule."""
    run = run_cli("check", "--format", "json", *args, str(path), cwd=cwd)
    return {n["rule"]: n["message"] for n in run.json()["run_notes"]}


def test_no_automatic_failover_runbook_on_1_25_has_no_out_of_service_taint() -> None:
    found = check(POSTGRES, "--kube-version", "1.25")
    note = notes(POSTGRES, "--kube-version", "1.25")["no-automatic-failover"]
    assert "(force delete, Node deletion)" in note and "out-of-service" not in note
    text = explanation(found, "no-automatic-failover")
    assert "kubectl delete node NODE" in text and "kubectl taint node" not in text
    assert "out-of-service taint does not help: on Kubernetes 1.25" in text
    # the operator action quoted, simulated: Node deletion
    assert "(scenario node-deleted, Kubernetes 1.25)" in text
    assert simulate(POSTGRES, "node-deleted", "1.25")["recovered"] is True


def test_no_automatic_failover_runbook_from_1_26_is_the_out_of_service_taint() -> None:
    found = check(POSTGRES, "--kube-version", "1.26")
    note = notes(POSTGRES, "--kube-version", "1.26")["no-automatic-failover"]
    assert "(force delete, out-of-service taint, Node deletion)" in note
    text = explanation(found, "no-automatic-failover")
    assert "kubectl taint node NODE node.kubernetes.io/out-of-service" in text
    assert "(scenario node-loss-out-of-service, Kubernetes 1.26)" in text
    assert simulate(POSTGRES, "node-loss-out-of-service", "1.26")["recovered"] is True


def test_a_feature_gate_turned_on_in_the_config_brings_the_taint_back(tmp_path: Path) -> None:
    cwd = config(tmp_path, "feature-gates:\n  NodeOutOfServiceVolumeDetach: true\n")
    note = notes(POSTGRES, "--kube-version", "1.25", cwd=cwd)["no-automatic-failover"]
    assert "out-of-service taint" in note


@pytest.mark.parametrize(
    ("kube_version", "runbook"),
    [
        ("1.25", "(force delete or Node deletion; the out-of-service taint needs 1.26)"),
        ("1.26", "(force delete, or the node.kubernetes.io/out-of-service taint)"),
    ],
)
def test_single_replica_runbook_names_what_works(kube_version: str, runbook: str) -> None:
    found = check(POSTGRES, "--kube-version", kube_version)
    assert message(found, "single-replica").endswith("not back without an operator")
    assert runbook in explanation(found, "single-replica")


def _rwo_platform(tmp_path: Path, extra: str = "") -> Path:
    """A platform that deletes dead Nodes at 2 min, and an objective the detach wait misses."""
    return config(
        tmp_path,
        "profile:\n  node-remediation: node-deletion\n  node-deleted-after-s: 120\n"
        + extra
        + "objectives:\n  node-loss:\n    max-unavailable: 0\n    recover-within: 5m\n",
    )


RWO_SOURCE = RULES / "rwo-volume-reattach" / "fail-rwop-node-deletion" / "sts.yaml"


def _rwo(cwd: Path) -> Path:
    """The example copied beside the configuration in ``cwd`` (found from the file up)."""
    copy = cwd / "sts.yaml"
    copy.write_text(RWO_SOURCE.read_text(encoding="utf-8"), encoding="utf-8")
    return copy


def test_rwo_volume_reattach_quotes_node_deletion_on_1_25(tmp_path: Path) -> None:
    cwd = _rwo_platform(tmp_path)
    found = check(_rwo(cwd), "--kube-version", "1.25", cwd=cwd)
    msg = message(found, "rwo-volume-reattach")
    assert f"with the Node deleted at {fmt_duration(DEFAULTS.node_deleted_after_s)}" in msg
    assert f"waits {fmt_duration(DEFAULTS.max_wait_for_unmount_s)} to detach" in msg
    assert "does nothing on Kubernetes 1.25" in explanation(found, "rwo-volume-reattach")
    # the run note states the same wait for every set (no out-of-service taint on 1.25)
    note = notes(POSTGRES, "--kube-version", "1.25")["rwo-volume-reattach"]
    assert "out-of-service" not in note and "6m0s after a force delete" in note


def test_rwo_volume_reattach_quotes_the_profile_detach_wait(tmp_path: Path) -> None:
    cwd = _rwo_platform(tmp_path, "  max-wait-for-unmount-s: 240\n")
    assert f"waits {fmt_duration(240)} to detach" in message(
        check(_rwo(cwd), cwd=cwd), "rwo-volume-reattach"
    )
    assert (
        f"{fmt_duration(240)} after a force delete"
        in notes(_rwo(cwd), cwd=cwd)["rwo-volume-reattach"]
    )
    default = notes(POSTGRES, cwd=tmp_path.parent)["rwo-volume-reattach"]
    assert f"{fmt_duration(DEFAULTS.max_wait_for_unmount_s)} after a force delete" in default


def test_disabled_force_detach_is_quoted_from_1_30(tmp_path: Path) -> None:
    cwd = _rwo_platform(tmp_path, "  disable-force-detach-on-timeout: true\n")
    on_1_30 = message(check(_rwo(cwd), "--kube-version", "1.30", cwd=cwd), "rwo-volume-reattach")
    assert "waits never (force detach is off) to detach" in on_1_30
    assert "not back" in on_1_30
    # the flag does not exist before 1.30 (#120344): the 6-minute force detach still happens
    on_1_29 = message(check(_rwo(cwd), "--kube-version", "1.29", cwd=cwd), "rwo-volume-reattach")
    assert f"waits {fmt_duration(DEFAULTS.max_wait_for_unmount_s)} to detach" in on_1_29


# --- eviction-disabled-by-toleration ---------------------------------------------------------


def test_toleration_messages_quote_the_profile_defaults(tmp_path: Path) -> None:
    cwd = config(
        tmp_path,
        "profile:\n  default-unreachable-toleration-s: 45\n  default-not-ready-toleration-s: 75\n",
    )
    never = RULES / "eviction-disabled-by-toleration" / "fail-unreachable-no-seconds.yaml"
    text = explanation(check(never, cwd=cwd), "eviction-disabled-by-toleration")
    assert "(the default toleration is 45 s)" in text and "300 s" not in text
    noschedule = RULES / "eviction-disabled-by-toleration" / "fail-noschedule-only.yaml"
    found = check(noschedule, cwd=cwd)
    info = message(found, "eviction-disabled-by-toleration")
    assert "pods are still evicted 75 s after the node fails" in info
    assert "tolerationSeconds: 75}" in explanation(found, "eviction-disabled-by-toleration")
    default = explanation(check(never, cwd=tmp_path.parent), "eviction-disabled-by-toleration")
    assert f"(the default toleration is {DEFAULTS.default_unreachable_toleration_s:g} s)" in default


def test_catch_all_toleration_names_every_way_out() -> None:
    found = check(CATCH_ALL, "--kube-version", "1.34")
    assert "(nor by the out-of-service taint)" in message(found, "eviction-disabled-by-toleration")
    text = explanation(found, "eviction-disabled-by-toleration")
    assert "it also tolerates node.kubernetes.io/out-of-service" in text
    assert "only a force delete, deleting the Node (PodGC then force-deletes its pods)" in text
    assert "a plain delete of metrics-0 while the node has the taint" in text
    on_1_25 = explanation(
        check(CATCH_ALL, "--kube-version", "1.25"), "eviction-disabled-by-toleration"
    )
    assert "only a force delete or deleting the Node" in on_1_25
    assert "plain delete" not in on_1_25 and "does nothing on Kubernetes 1.25" in on_1_25


def test_catch_all_toleration_is_no_out_of_service_runbook() -> None:
    """A pod that tolerates the out-of-service taint is not released by it, so the
    no-automatic-failover runbook quotes Node deletion instead."""
    text = explanation(check(CATCH_ALL, "--kube-version", "1.34"), "no-automatic-failover")
    assert "a toleration of the pod also covers it" in text
    assert "kubectl delete node NODE" in text and "kubectl taint node" not in text
    assert "(scenario node-deleted, Kubernetes 1.34)" in text


# --- rules that need a feature gate ----------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "path", "on_from"),
    [
        ("pvc-retention-delete", RULES / "pvc-retention-delete" / "fail-when-scaled.yaml", 27),
        (
            "pdb-blocks-drain",
            RULES / "pdb-blocks-drain" / "fail-unhealthy-policy-unset.yaml",
            27,
        ),
        (
            "replicas-share-failure-domain",  # minDomains honoured from 1.27
            RULES / "replicas-share-failure-domain" / "pass-zone-spread-min-domains.yaml",
            -27,
        ),
    ],
)
@pytest.mark.parametrize("minor", [25, 26, 27])
def test_version_gated_findings(rule: str, path: Path, on_from: int, minor: int) -> None:
    """``on_from`` N: reported from 1.N on; -N: reported only before 1.N."""
    found = [f for f in check(path, "--kube-version", f"1.{minor}") if f["rule"] == rule]
    expected = minor >= on_from if on_from > 0 else minor < -on_from
    assert bool(found) == expected, [f["message"] for f in found]


def test_pvc_retention_gate_can_be_turned_on_in_the_config(tmp_path: Path) -> None:
    cwd = config(tmp_path, "feature-gates:\n  StatefulSetAutoDeletePVC: true\n")
    path = RULES / "pvc-retention-delete" / "fail-when-scaled.yaml"
    found = check(path, "--kube-version", "1.26", cwd=cwd)
    assert [f for f in found if f["rule"] == "pvc-retention-delete"]
