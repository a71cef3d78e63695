"""The workshop's agendas, read from ``book/workshop_plan.yml``: blocks, steps, clock times and the cells to run.

The file's own comments say what each field means. :func:`load` reads it into
:class:`Agenda` objects whose clock times are the running sum of the steps'
minutes, so that no time is typed and a block always lasts what its steps
take. :func:`tools.sphinx.workshop_pages` writes the guide's agendas, the
participants' timetable and the exercise sheet from them, and
``tests/book/test_workshop_plan.py`` runs every live step in a fresh kernel.

>>> agendas = load()
>>> [(a.key, a.minutes, a.slack) for a in agendas]
[('90min', 90, 9), ('halfday', 180, 18)]
>>> first = agendas[0].blocks[1]
>>> clock(first.start), first.title, first.steps[0].cells[0]
('0:04', 'Why splitting is not free', PlanCell(id='942ca177', role='setup'))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PLAN", "KINDS", "ROLES", "PlanCell", "Step", "Block", "Agenda", "clock", "load", "unquoted_cells"]

#: The plan, beside the pages written from it.
PLAN = Path(__file__).resolve().parents[2] / "book" / "workshop_plan.yml"

#: Step kinds and how the guide names them.
KINDS = {
    "live": "Live-code",
    "show": "Show",
    "set": "Set",
    "ask": "Ask",
    "say": "Say",
    "break": "Break",
    "buffer": "Buffer",
}

#: Roles of a cell in a live step (see the plan's comments).
ROLES = ("setup", "live", "check", "needs")


@dataclass(frozen=True)
class PlanCell:
    """One cell to run: its nbformat id and its role."""

    id: str
    role: str = "live"


@dataclass
class Step:
    """One timed step of a block; ``start`` is minutes from 0:00."""

    kind: str
    minutes: int
    start: int = 0
    text: str = ""
    notebook: str = ""
    cells: list[PlanCell] = field(default_factory=list)
    exercises: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    cut: str = ""


@dataclass
class Block:
    """A titled block of an agenda: its steps, the chapters it teaches, what to leave with."""

    title: str
    steps: list[Step]
    start: int = 0
    chapters: list[str] = field(default_factory=list)
    leave_with: str = ""

    @property
    def minutes(self) -> int:
        return sum(step.minutes for step in self.steps)

    @property
    def end(self) -> int:
        return self.start + self.minutes


@dataclass
class Agenda:
    """One agenda: its key (``90min``), title, planned length and blocks."""

    key: str
    title: str
    minutes: int
    blocks: list[Block]

    @property
    def total(self) -> int:
        """The minutes its blocks add up to (a test holds it equal to :attr:`minutes`)."""
        return sum(block.minutes for block in self.blocks)

    @property
    def slack(self) -> int:
        """Minutes of buffer steps."""
        return sum(step.minutes for block in self.blocks for step in block.steps if step.kind == "buffer")

    def steps(self, kind: str | None = None) -> list[tuple[Block, Step]]:
        """Every (block, step) in order, or those of one ``kind``."""
        return [(block, step) for block in self.blocks for step in block.steps if kind in (None, step.kind)]


def clock(minutes: int) -> str:
    """Minutes from the start as the agenda writes them.

    >>> clock(0), clock(65), clock(180)
    ('0:00', '1:05', '3:00')
    """
    return f"{minutes // 60}:{minutes % 60:02d}"


def _cell(text: str) -> PlanCell:
    """``"ID"`` or ``"ID ROLE"`` as a :class:`PlanCell`.

    >>> _cell("10d6929d check")
    PlanCell(id='10d6929d', role='check')
    >>> _cell("10d6929d typo")
    Traceback (most recent call last):
    ...
    ValueError: cell '10d6929d typo': the role must be one of ('setup', 'live', 'check', 'needs')
    """
    if not isinstance(text, str):
        raise ValueError(f"cell {text!r} is a {type(text).__name__}, not a string: quote it in the plan")
    parts = text.split()
    if not 1 <= len(parts) <= 2 or (len(parts) == 2 and parts[1] not in ROLES):
        raise ValueError(f"cell {text!r}: the role must be one of {ROLES}")
    return PlanCell(*parts)


def _step(data: dict, start: int) -> Step:
    unknown = set(data) - {"kind", "minutes", "text", "notebook", "cells", "exercises", "questions", "cut"}
    if unknown or data.get("kind") not in KINDS:
        raise ValueError(f"step {data}: kind must be one of {sorted(KINDS)}; unknown fields {sorted(unknown)}")
    return Step(
        kind=data["kind"],
        minutes=int(data["minutes"]),
        start=start,
        text=data.get("text", ""),
        notebook=data.get("notebook", ""),
        cells=[_cell(c) for c in data.get("cells", [])],
        exercises=list(data.get("exercises", [])),
        questions=list(data.get("questions", [])),
        cut=data.get("cut", ""),
    )


def unquoted_cells(text: str) -> list[str]:
    """The cells of a plan's text that YAML reads as something other than a string, each as ``line N: TEXT``.

    >>> unquoted_cells('cells: ["942ca177 setup", 12734400, 01234567, 0f91e9ee]')
    ['line 1: 12734400', 'line 1: 01234567']
    """
    import yaml

    found = []

    def walk(node) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.value == "cells" and isinstance(value, yaml.SequenceNode):
                    found.extend(
                        f"line {item.start_mark.line + 1}: {item.value}"
                        for item in value.value
                        if not (isinstance(item, yaml.ScalarNode) and item.tag.endswith(":str"))
                    )
                walk(value)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                walk(item)

    walk(yaml.compose(text, Loader=yaml.SafeLoader))
    return found


def load(path: Path = PLAN) -> list[Agenda]:
    """Every agenda of the plan file, with clock times filled in.

    Raises ``ValueError``, in one line, naming each cell id YAML does not read as a string (:func:`unquoted_cells`).
    """
    import yaml

    text = Path(path).read_text(encoding="utf-8")
    unquoted = unquoted_cells(text)
    if unquoted:
        raise ValueError(
            f"{Path(path).name}: cell ids must be quoted strings; YAML reads these as numbers: {'; '.join(unquoted)}"
        )
    agendas = []
    for data in yaml.safe_load(text)["agendas"]:
        now, blocks = 0, []
        for block in data["blocks"]:
            steps = []
            start = now
            for step in block["steps"]:
                steps.append(_step(step, now))
                now += steps[-1].minutes
            blocks.append(
                Block(
                    title=block["title"],
                    steps=steps,
                    start=start,
                    chapters=list(block.get("chapters", [])),
                    leave_with=block.get("leave_with", ""),
                )
            )
        agendas.append(Agenda(key=data["key"], title=data["title"], minutes=int(data["minutes"]), blocks=blocks))
    return agendas
