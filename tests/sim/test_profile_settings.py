"""Every setting of the cluster profile is read by the simulator: a key the configuration
accepts (``profile:``) that nothing reads would change nothing while the user believes it
does (``provisioning-s`` was such a key)."""

from __future__ import annotations

import re
from pathlib import Path

import ssrisk.embedded_sim as embedded_sim
from ssrisk.embedded_sim.profile import ClusterProfile


def test_every_profile_setting_is_read() -> None:
    package = Path(embedded_sim.__file__).parent
    source = "\n".join(p.read_text(encoding="utf-8") for p in sorted(package.rglob("*.py")))
    unread = [
        name
        for name in ClusterProfile.__struct_fields__
        # an attribute read (``profile.attach_s``) or a name looked up (``"attach_s"``)
        if not re.search(rf"\.{name}\b|[\"']{name}[\"']", source)
    ]
    assert unread == []
