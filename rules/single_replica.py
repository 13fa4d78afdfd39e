"""single-replica: a StatefulSet with one replica has no failover at all."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule
from ssrisk.timeline import event_time, fmt_duration, timeline_lines

from ._cluster import default_toleration_s, out_of_service_works, seconds
from ._podspec import UNREACHABLE


class SingleReplica(Rule):
    id = "single-replica"
    severity = Severity.ERROR
    summary = "replicas is 1 (or unset, which defaults to 1): any node loss is a full outage"
    references = (
        "web: docs/tasks/run-application/force-delete-stateful-set-pod.md",
        "k8s: pkg/controller/tainteviction/taint_eviction.go#processPodOnNode",
        "k8s: pkg/controller/statefulset/stateful_set_control.go#processReplica",
        "k8s: pkg/apis/apps/v1/defaults.go#SetDefaults_StatefulSet (replicas defaults to 1)",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        raw = ctx.sts.get("spec", "replicas")
        if ctx.replicas != 1 or (raw is None and ctx.is_fragment):
            return
        at = ctx.sts.pos("spec", "replicas") if raw is not None else ctx.sts.start()
        how = "replicas: 1" if raw is not None else "replicas is not set and defaults to 1"
        pod = ctx.pod_name(0)
        result = ctx.try_simulate("node-loss")
        default = seconds(default_toleration_s(ctx, UNREACHABLE))
        text = f"""
With a single replica every disruption of the one pod is an outage of the whole StatefulSet.
On node loss the node lifecycle controller marks the node Unknown after
node-monitor-grace-period and the pod NotReady (it leaves the Service endpoints); the taint
eviction controller deletes the pod after its unreachable toleration ({default} by default); the
deletion is graceful, so only the lost kubelet could complete it, and the StatefulSet
controller will not create a new {pod} while the old object exists. A PodDisruptionBudget
does not help: it only limits voluntary evictions.
"""
        if result is None:
            msg = (
                f"{how}: when its node is lost, {pod} is the whole set and is not replaced "
                "until an operator acts"
            )
        else:
            not_ready = event_time(result, "pod-not-ready", pod)
            if result.recovered and result.time_to_recovery_s is not None:
                outcome = f"back after {fmt_duration(result.time_to_recovery_s)}"
            else:
                actions = (
                    "force delete, out-of-service taint or Node deletion"
                    if out_of_service_works(ctx)
                    else "force delete or Node deletion"
                )
                outcome = f"never replaced without an operator ({actions})"
            msg = (
                f"{how}: simulated node loss on Kubernetes {ctx.kube_version} takes the only "
                f"pod {pod} out of service at {fmt_duration(not_ready)} and it is {outcome}"
            )

        def explanation() -> str:
            out = text
            if result is not None:
                out += (
                    f"\nSimulated timeline (scenario node-loss, Kubernetes {ctx.kube_version}):\n"
                    + "\n".join(timeline_lines(result))
                    + f"\nVerdict: {result.to_dict().get('verdict', '')}\n"
                )
            runbook = (
                "force delete, or the node.kubernetes.io/out-of-service taint"
                if out_of_service_works(ctx)
                else "force delete or Node deletion; the out-of-service taint needs Kubernetes 1.26"
            )
            out += f"""
Fix: run at least 2 replicas (3 for quorum systems) spread over nodes, or accept the outage
and keep a runbook ({runbook}).
"""
            return out

        yield self.finding(ctx, at, msg, explanation)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [SingleReplica()]
