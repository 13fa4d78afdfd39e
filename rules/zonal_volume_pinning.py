"""zonal-volume-pinning: zonal volumes pin ordinals to zones the pods' spreading cannot follow."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from ssrisk.embedded_sim.objects import StorageClass
from ssrisk.embedded_sim.storage import pins_zone

from ssrisk.hookspecs import hookimpl
from ssrisk.inventory import storage_class_model
from ssrisk.model import Finding, K8sObject, Severity
from ssrisk.rule import CheckContext, Rule

from ._podspec import persistent_volume, template
from ._sim import timeline_block


class ZonalVolumePinning(Rule):
    id = "zonal-volume-pinning"
    severity = Severity.WARNING
    summary = (
        "a zonal StorageClass with volumeBindingMode Immediate, or PersistentVolumes with zone "
        "affinity, pin replicas to zones that the pods' spreading does not choose"
    )
    references = (
        "web: docs/concepts/storage/storage-classes.md (Volume binding mode)",
        "k8s: pkg/scheduler/framework/plugins/volumebinding/binder.go#FindPodVolumes",
        "k8s: pkg/controller/volume/persistentvolume/pv_controller.go#provisionClaim",
        "kubernetes/kubernetes#34583",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.replicas < 1:
            return
        seen: set[str] = set()
        for vct in template(ctx.sts).claim_templates:
            sc = ctx.inventory.storage_class_for_claim(vct.class_name)
            claim = vct.name
            if sc is not None and sc.name not in seen:
                seen.add(sc.name)
                model = storage_class_model(sc)
                if pins_zone(model, vct.access_modes or ("ReadWriteOnce",)):
                    yield from self._immediate(ctx, sc, model, claim)
            yield from self._bound_pvs(ctx, claim)

    def _immediate(
        self, ctx: CheckContext, sc: K8sObject, model: StorageClass, claim: str
    ) -> Iterator[Finding]:
        prov, mode = model.provisioner, model.binding_mode
        if model.binding != "Immediate":
            return
        at = sc.pos("volumeBindingMode") if mode is not None else sc.pos("provisioner")
        how = "volumeBindingMode Immediate" if mode else "volumeBindingMode unset: Immediate"
        sim = ctx.try_simulate("zone-loss")
        msg = (
            f"StorageClass {sc.name!r} ({how}) picks the zone of claim {claim!r} before "
            f"the pod: its loss leaves the ordinal Pending"
        )
        text = f"""
The disks are made by {prov}, one zone each.
With volumeBindingMode Immediate the PersistentVolume controller provisions a claim as soon
as it is created, before the scheduler has picked a node, so a zonal disk lands in an
arbitrary zone (often the same zone for several ordinals, or a zone where the pod's
constraints allow no node: "didn't match PersistentVolume's node affinity", #34583). A
StatefulSet keeps each ordinal's claim, so the pod is tied to that zone for good.
WaitForFirstConsumer delays provisioning until the pod is scheduled, so the zone follows the
pods' anti-affinity and topology spread.
"""
        fix = f"""
Fix: set volumeBindingMode: WaitForFirstConsumer on StorageClass {sc.name} (a new class for
existing claims; the field is immutable) and spread the replicas over zones.
"""

        def explanation() -> str:
            timeline = "\n" + timeline_block(ctx, sim) if sim is not None else ""
            return text + timeline + fix

        facts = {"storage_class": sc.name, "claim": claim, "volume_binding_mode": "Immediate"}
        yield self.finding(ctx, at, msg, explanation, facts=facts)

    def _bound_pvs(self, ctx: CheckContext, claim: str) -> Iterator[Finding]:
        """PersistentVolumes bound to this set's claims that share a zone or miss it."""
        if not claim:
            return
        ns = ctx.sts.namespace or "default"
        by_zone: dict[str, list[tuple[int, K8sObject, Any]]] = defaultdict(list)
        prefix = f"{claim}-{ctx.sts.name}-"
        for pv in ctx.inventory.volumes_claimed_by_ordinal(ns, prefix):
            model = persistent_volume(pv)
            if model.claim is None or model.claim[0] != ns:
                continue
            name = model.claim[1]
            if not name.startswith(prefix) or not name[len(prefix) :].isdigit():
                continue
            if len(model.zones) == 1 and model.zone_path is not None:
                (zone,) = model.zones
                by_zone[zone].append((int(name[len(prefix) :]), pv, model.zone_path))
        n = ctx.replicas
        for zone, items in sorted(by_zone.items()):
            if len(items) < 2 or n < 2:
                continue
            items.sort(key=lambda x: x[0])
            ordinals = ", ".join(str(o) for o, _, _ in items)
            _, pv, where = items[-1]
            yield self.finding(
                ctx,
                pv.pos(*where),
                f"the volumes of ordinals {ordinals} of claim {claim!r} are all in zone {zone}: "
                f"a loss of that zone takes those {len(items)} of {n} replicas",
                """
A PersistentVolume with a zone node affinity can only be used by a pod on a node of that
zone (scheduler VolumeBinding filter), and a StatefulSet keeps each ordinal's claim, so these
ordinals are tied to one zone for good.

Fix: recreate the volumes in different zones (from backups or by letting the application
re-replicate), and use a StorageClass with volumeBindingMode: WaitForFirstConsumer with zone
spreading on the pods.
""",
                facts={
                    "claim": claim,
                    "zone": zone,
                    "ordinals": tuple(o for o, _, _ in items),
                    "in_zone": len(items),
                    "replicas": n,
                },
            )


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [ZonalVolumePinning()]
