"""Reading replicas-share-failure-domain's one-line messages (shared by the message and the
consistency tests)."""

from __future__ import annotations

import re

#: The figures of a one-line message: "takes K of N" / "a zone loss K of N" (the worst case,
#: with the condition it needs if any) and "(simulated on <shape>: A[ of N][ and B])".
WORST = re.compile(
    r"a (node|zone) loss (?:takes )?(\d+) of (\d+)((?: when [^,(]+| with \d+ nodes in a zone)?)"
)
SIMULATED_FIGURES = re.compile(r"\(simulated(?: on [^:()]+)?: (\d+)(?: of \d+)?(?: and (\d+))?\)")


def contradictions(message: str) -> list[str]:
    """The figures of a message that disagree without a reason: a worst case larger than
    the simulated figure for the same loss, with no condition saying what it needs, or
    "worst case" in front of a figure that is not the worst on the simulated cluster."""
    worst = WORST.findall(message)
    sim = SIMULATED_FIGURES.search(message)
    if sim is None:
        return []
    simulated = [int(sim.group(1))] + ([int(sim.group(2))] if sim.group(2) else [])
    out = []
    for (loss, k, _n, condition), took in zip(worst, simulated, strict=False):
        if int(k) > took and not condition:
            out.append(f"{loss} loss: worst {k}, simulated {took}, no condition")
        if int(k) > took and "worst case" in message:
            out.append(f"{loss} loss: 'worst case' although {took} was the worst simulated")
        if int(k) < took:
            out.append(f"{loss} loss: simulated {took} above the worst case {k}")
    return out
