"""``ssrisk simulate``: the JSON contract, the readable timeline and determinism."""

from __future__ import annotations

from conftest import ROOT, run_cli

POSTGRES = str(ROOT / "examples" / "postgres.yaml")


def test_json_result_contract() -> None:
    args = ("simulate", "--format", "json", "--kube-version", "1.34", "--scenario", "node-loss")
    run = run_cli(*args, POSTGRES)
    assert run.code == 0, run.err
    doc = run.json()
    assert doc["kube_version"] == "1.34"
    (res,) = doc["results"]
    assert res["object"]["name"] == "postgres" and res["object"]["namespace"] == "shop"
    assert res["scenario"] == "node-loss" and res["replicas"] == 1
    assert res["recovered"] is False and res["time_to_recovery_s"] is None
    assert res["manual_action_required"] is True
    assert res["pods"]["postgres-0"]["unavailable_s"] is None
    times = [e["t_s"] for e in res["timeline"]]
    assert times == sorted(times) and times[0] >= 0
    for e in res["timeline"]:
        assert set(e) >= {"t_s", "pod", "event", "source"} and e["source"]
    # NotReady at G - 2.5 s with G = 50 s on 1.34; eviction 300 s after the NoExecute taint
    not_ready = next(e for e in res["timeline"] if e["kind"] == "pod-not-ready")
    assert not_ready["t_s"] == 47.5


def test_text_timeline_and_verdict() -> None:
    run = run_cli("simulate", "--kube-version", "1.31", "--scenario", "node-loss", POSTGRES)
    assert run.code == 0
    assert f"== {POSTGRES}:14: shop/postgres  scenario node-loss" in run.out
    assert "t=    37.5s" in run.out  # NotReady at 37.5 s on 1.31 (G = 40 s)
    assert "verdict: " in run.out and "[pkg/controller/" in run.out


def test_same_input_gives_byte_identical_json() -> None:
    args = ("simulate", "--format", "json", "--scenario", "node-drain", "--scenario", "bad-rollout")
    first = run_cli(*args, str(ROOT / "examples"))
    second = run_cli(*args, str(ROOT / "examples"))
    assert first.out == second.out and first.out


def test_unknown_scenario_is_a_usage_error() -> None:
    run = run_cli("simulate", "--scenario", "meteor-strike", POSTGRES)
    assert run.code == 2 and "unknown scenario" in run.err


def test_simulate_reads_the_configuration_file(tmp_path) -> None:
    (tmp_path / ".ssrisk.yaml").write_text(
        'kube-version: "1.31"\nprofile:\n  default-unreachable-toleration-s: 60\n'
    )
    run = run_cli("simulate", "--format", "json", POSTGRES, cwd=tmp_path)
    (res,) = run.json()["results"]
    assert res["kube_version"] == "1.31"
    evicted = next(e for e in res["timeline"] if e["kind"] == "pod-deletion-requested")
    # NotReady at 37.5 s, NoExecute taint one node-monitor-period (5 s) + 0.1 s later, 60 s
    assert evicted["t_s"] == 102.6
    flag = run_cli("simulate", "--format", "json", "--kube-version", "1.34", POSTGRES, cwd=tmp_path)
    assert flag.json()["results"][0]["kube_version"] == "1.34"


def test_help_lists_the_simulator_scenarios(tmp_path) -> None:
    from ssrisk.embedded_sim import DESCRIPTIONS

    shown = run_cli("simulate", "--help", cwd=tmp_path)
    assert shown.code == 0
    listed = [line.strip() for line in shown.out.split("scenarios:", 1)[1].splitlines()]
    # every registered scenario, with its description, and no other (the registry is the list)
    assert [line.split(":", 1)[0] for line in listed if line] == list(DESCRIPTIONS)
    assert all(f"{n}: {d}" in " ".join(shown.out.split()) for n, d in DESCRIPTIONS.items())


def test_check_says_when_a_set_is_too_large_to_simulate(tmp_path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text(
        (ROOT / "examples" / "postgres.yaml").read_text().replace("replicas: 1", "replicas: 400")
    )
    run = run_cli("check", str(big))
    assert "not simulated (" in run.out and "more than the 250 pods" in run.out
    assert run.code in (0, 1)


def test_each_path_is_simulated_under_its_own_configuration(tmp_path) -> None:
    # as check reads them: simulate used the first path's file for every path
    sts = (ROOT / "examples" / "postgres.yaml").read_text()
    for name, version in (("old", "1.27"), ("new", "1.33")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "db.yaml").write_text(sts)
        (tmp_path / name / ".ssrisk.yaml").write_text(f'kube-version: "{version}"\n')
    run = run_cli("simulate", "--format", "json", "old", "new", cwd=tmp_path)
    assert run.code == 0, run.err
    got = [(r["path"], r["line"], r["kube_version"]) for r in run.json()["results"]]
    # each result names its file: the two copies are told apart (found by an outside tester)
    assert got == [("old/db.yaml", 14, "1.27"), ("new/db.yaml", 14, "1.33")]
    text = run_cli("simulate", "old", "new", cwd=tmp_path).out
    assert "== old/db.yaml:14: shop/postgres  scenario node-loss" in text
    assert "== new/db.yaml:14: shop/postgres  scenario node-loss" in text


def test_a_scenario_named_twice_runs_once_and_verdicts_say_what_t0_is() -> None:
    args = ("simulate", "--format", "json", "--scenario", "node-drain", "--scenario")
    doc = run_cli(*args, "node-drain", "--scenario", "rolling-update", POSTGRES).json()
    drain, rollout = doc["results"]  # (node-drain once: it was printed twice)
    assert (drain["scenario"], rollout["scenario"]) == ("node-drain", "rolling-update")
    # a drain and a rollout are operations on a healthy cluster, not faults
    assert "s after the drain starts" in drain["verdict"], drain["verdict"]
    assert "s after it starts" in rollout["verdict"], rollout["verdict"]
    loss = run_cli(
        "simulate", "--format", "json", "--scenario", "node-loss-out-of-service", POSTGRES
    )
    assert "s after the fault" in loss.json()["results"][0]["verdict"]
