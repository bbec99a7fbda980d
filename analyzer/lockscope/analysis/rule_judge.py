"""Which locking rules a file's writes hit on the recorded kernel, with the measured
lock mode as the last word.

The kernel's version picks each rule's range (rule_types.Rule.holds_for). Where the
recorder measured how the writes of the rule's class held i_rwsem (lock_mode.py), the
share that ran exclusive is set against what the range's rule expects; when they differ
by DISAGREE or more, the range whose rule matches the measurement is used instead and
one line says so ("this kernel behaves like >= 6.5 for unaligned overwrites of written
blocks: a backport?"): distributions backport locking changes, so a version alone is not
the truth. A rule whose writes ran shared although it makes them exclusive, and no range
of it fits, is dropped, with its line. Writes that ran exclusive although the rule has
them shared count only where another range of the rule fits and no other rule explains
them (one write may hit two rules: the classes are counted apart).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..schema import Cause, KernelRules, ModeShare, WriteClasses
from . import rules_ext4, rules_xfs
from .kernel_release import KernelVersion, parse_release, version_text
from .lock_mode import mode_share, writes_of
from .rule_types import FileFacts, Holds, Rule
from .write_shares import MIN_FRACTION, frac

RULES: tuple[Rule, ...] = rules_ext4.RULES + rules_xfs.RULES
DISAGREE = 0.5       # measured and expected exclusive shares this far apart disagree
MIN_MEASURED = 20    # fewer measured writes of a class judge nothing


@dataclass
class Judgment:
    causes: list[Cause]
    disagreements: list[str]


def _fraction(h: Holds, c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    return h.share(c, facts) if h.share and h.reason else (0.0, "")


def _expected(h: Holds, key: str, c: WriteClasses, facts: FileFacts) -> float:
    """The share of class `key`'s writes that `h` makes exclusive (at most all of them)."""
    of = 1.0 if key == "writes" else frac(c, key)  # type: ignore[arg-type]  # a class key
    return min(_fraction(h, c, facts)[0], of) / of if of else 0.0


def _alternative(rule: Rule, running: Holds, m: ModeShare, c: WriteClasses,
                 facts: FileFacts) -> Holds | None:
    """The range nearest to `running` whose rule fits the measured exclusive share."""
    at = rule.ranges.index(running)
    x = m["exclusive_share"] or 0.0
    fits = [h for h in rule.ranges if h is not running
            and abs(_expected(h, m["class"], c, facts) - x) < DISAGREE]
    return min(fits, key=lambda h: abs(rule.ranges.index(h) - at), default=None)


def _line(rule: Rule, running: Holds, alt: Holds | None, m: ModeShare, expected: float,
          version: KernelVersion | None) -> str:
    whose = f"the {version_text(version)} rule" if version else "the newest rule"
    measured = (f"{m['exclusive_share']:.0%} of the {m['measured']} measured "
                f"{writes_of(m['class'])} ran with i_rwsem exclusive; {whose} "
                f"({running.source}) expects {expected:.0%}")
    if alt is None:
        return f"the measured lock mode contradicts the rule for {rule.about} ({measured})"
    newer = rule.ranges.index(alt) > rule.ranges.index(running)
    return (f"this kernel behaves like {alt.range_text()} for {rule.about}: "
            f"{'a backport?' if newer else 'an older rule kept?'} ({measured})")


def _explained_elsewhere(rule: Rule, key: str, share: float,
                         chosen: dict[Rule, Holds | None], c: WriteClasses,
                         facts: FileFacts) -> bool:
    """Whether another rule as chosen can make that share of the class exclusive (the
    classes are counted apart, so a write may hit two rules)."""
    return any(h is not None and _expected(h, key, c, facts) > share - DISAGREE
               for r, h in chosen.items() if r is not rule)


def _measured(rule: Rule, c: WriteClasses) -> ModeShare | None:
    m = mode_share(c, rule.write_class) if rule.write_class else None
    ok = m is not None and m["exclusive_share"] is not None and m["measured"] >= MIN_MEASURED
    return m if ok else None


def _choose(rules: list[Rule], running: dict[Rule, Holds], c: WriteClasses, facts: FileFacts,
            version: KernelVersion | None, notes: list[str]) -> dict[Rule, Holds | None]:
    """The range to cite for each rule: the version's, unless the measurement says
    otherwise. First the rules whose writes ran less exclusive than they say (nothing
    else can lower a share: the kernel did not follow the rule), then those whose ran
    more exclusive, unless another rule as chosen explains it."""
    chosen: dict[Rule, Holds | None] = dict(running)
    for rule in rules:
        h, m = running[rule], _measured(rule, c)
        if m is None or m["exclusive_share"] is None:
            continue
        key, x = m["class"], m["exclusive_share"]
        e = _expected(h, key, c, facts)
        if e - x >= DISAGREE:
            alt = _alternative(rule, h, m, c, facts)
            notes.append(_line(rule, h, alt, m, e, version))
            chosen[rule] = alt      # None: a rule the kernel did not follow is dropped
    for rule in rules:
        h, m = running[rule], _measured(rule, c)
        if m is None or m["exclusive_share"] is None or chosen[rule] is not h:
            continue
        key, x = m["class"], m["exclusive_share"]
        e = _expected(h, key, c, facts)
        if x - e < DISAGREE or _explained_elsewhere(rule, key, x, chosen, c, facts):
            continue
        alt = _alternative(rule, h, m, c, facts)
        if alt is not None:     # else no range of this rule is about those writes
            notes.append(_line(rule, h, alt, m, e, version))
            chosen[rule] = alt
    return chosen


def _cause(rule: Rule, h: Holds, running: Holds, c: WriteClasses, facts: FileFacts,
           fraction: float, evidence: str) -> Cause:
    remedy = h.remedy
    if h is running and h.later and h.relieved and h.relieved(c) >= MIN_FRACTION:
        remedy += f"; {h.later}"
    return {"reason": h.reason or "", "rule": h.rule, "kernel_source": h.source,
            "kernel_range": h.range_text(), "commit": h.commit, "evidence": evidence,
            "fraction": round(fraction, 4), "remedy": remedy,
            "mode": mode_share(c, rule.write_class) if rule.write_class else None}


def judge(fstype: str, classes: WriteClasses, facts: FileFacts,
          version: KernelVersion | None, min_fraction: float = MIN_FRACTION) -> Judgment:
    """The causes (strongest first) and the disagreement lines for one file."""
    rules = [r for r in RULES if r.fstype == fstype]
    running = {r: r.holds_for(version) for r in rules}
    causes: list[Cause] = []
    notes: list[str] = []
    for rule, h in _choose(rules, running, classes, facts, version, notes).items():
        if h is None:
            continue
        fraction, evidence = _fraction(h, classes, facts)
        if fraction >= min_fraction:
            causes.append(_cause(rule, h, running[rule], classes, facts, fraction, evidence))
    causes.sort(key=lambda c: -c["fraction"])
    return Judgment(causes, notes)


NEWEST = max(h.since for r in RULES for h in r.ranges if h.since)
# the first kernel whose rules each table describes (XFS's reach back: no such note)
OLDEST = {"ext4": rules_ext4.V56}


def kernel_rules(release: str | None, disagreements: list[str],
                 fstype: str | None = None) -> KernelRules:
    """analysis.<fs>.kernel_rules: the release the rules were picked for, and how."""
    version = parse_release(release)
    oldest = OLDEST.get(fstype or "")
    note = None
    if version is None:
        note = (f"no kernel release in the document{f' ({release!r})' if release else ''}: "
                f"the newest rules (>= {version_text(NEWEST)}) were used")
    elif oldest and version < oldest:
        note = (f"kernel {version_text(version)} is older than the oldest {fstype} rules "
                f"lockscope describes ({version_text(oldest)}): those were used")
    return {"release": release, "version": version_text(version) if version else None,
            "note": note, "disagreements": disagreements}
