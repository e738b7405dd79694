"""report.md: the facts of a report (:func:`orchestrator.report.build.build_report`) for people.

:func:`render_markdown` draws the answer or refusal first, then the evidence, the candidates,
a Mermaid diagram of the argument graph, the verifications and the costs. It reads only the
report (:class:`~orchestrator.records.report.RunReport`), so a report.json read back renders the
same page.
"""

from __future__ import annotations

from collections.abc import Callable

from graph_server import mermaid
from orchestrator.checks import readable_latex
from orchestrator.records import Limits, Retrieval, RunReport


def render_markdown(report: RunReport) -> str:
    """report.md: the answer or refusal first, then the evidence, the graph and the costs."""
    out: list[str] = [f"# {_inline(report['headline'])}", ""]
    out += [f"**Question:** {_inline(report['question'])}", ""]
    if report["expected_answer"] is not None:
        out += [f"**Expected answer:** {_inline(report['expected_answer'])}", ""]
    if report["refused"]:
        out += [f"## Refused: `{report['refusal_reason']}`", "", _inline(report["statement"]), ""]
    else:
        out += ["## Answer", "", f"> {_inline(report['answer'])}", ""]
        out += [_inline(report["statement"]), ""]
    totals_ = report["totals"]
    out += [
        f"- Stop reason: `{report['stop_reason']}` ({_inline(report['stop_detail'])})",
        f"- Calls: {totals_['calls']} of a budget of {report['budget']['limit']} "
        f"({totals_['http_attempts']} HTTP attempts), cost: {_usd(totals_['cost_usd'])}, "
        f"wall clock: {report['timing']['wall_s']:.2f} s",
        f"- Model: `{report['model']}`; verification rounds: {report['rounds']}",
        *_limits_md(report["limits"]),
        "",
    ]
    for section in _SECTIONS:
        out += section(report)
    return "\n".join(out).rstrip() + "\n"


def _retrieval_md(report: RunReport) -> list[str]:
    """Corpus runs only: each retrieval round's queries, chunks and outcome."""
    retrieval = report.get("retrieval")
    if not retrieval:
        return []
    rewrite = retrieval["rewrite"]
    how = (
        "the question and its rewrites"
        if rewrite["fallback"] is None
        else f"the question alone ({_inline(rewrite['fallback'])})"
    )
    out = [
        "## Retrieval",
        "",
        f"Corpus `{_inline(retrieval['index'])}`; round 1 searched {how}. The rounds ended: "
        f"`{retrieval['end']}`.",
        "",
        "| round | queries | chunks added | outcome |",
        "|---:|---|---|---|",
    ]
    for r in retrieval["rounds"]:
        queries = "; ".join(_cell(q) for q in r["queries"])
        chunks = ", ".join(f"`{h['chunk_id']}`" for h in r["hits"])
        if "refused" not in r:
            outcome = "not run"
        elif r["refused"]:
            outcome = f"refused: {r['refusal_reason']}"
        else:
            outcome = "answered"
        out.append(_row(r["round"], queries, chunks or "-", outcome))
    return [*out, "", *_stages_md(retrieval), *_context_md(retrieval)]


def _stages_md(retrieval: Retrieval) -> list[str]:
    """Corpus runs only: each round's sub-questions, reranking and dropped chunks, and the
    HyDE passage, one line each (report.json has the details)."""
    out: list[str] = []
    hyde = retrieval.get("hyde")
    if hyde is not None:
        used = hyde["fallback"] or "its dense ranking joined round 1"
        out.append(f"- HyDE: {_inline(used)}.")
    for r in retrieval["rounds"]:
        if r.get("plan"):
            subs = "; ".join(_inline(h["sub_question"]) for h in r["plan"])
            out.append(f"- Round {r['round']}: retrieved hop by hop: {subs}.")
        if r.get("rerank"):
            rerank = r["rerank"]
            how = rerank["fallback"] or "its order was used"
            out.append(
                f"- Round {r['round']}: {rerank['method']} reranker over "
                f"{len(rerank['pool'])} chunks: {_inline(how)}."
            )
        if r.get("dropped"):
            gone = "; ".join(
                f"`{_inline(d['chunk_id'])}` ({_inline(d['reason'])})" for d in r["dropped"]
            )
            out.append(f"- Round {r['round']}: dropped {gone}.")
    return [*out, ""] if out else []


def _context_md(retrieval: Retrieval) -> list[str]:
    """Corpus runs only: the context window the evidence was packed into, what each round
    left out for it, and any round the server still found too long."""
    window = retrieval.get("context_tokens")
    out = [
        "Context window unknown: every retrieved chunk was shown."
        if window is None
        else f"Evidence packed best first into a context window of {window} tokens "
        "(prompt estimated pessimistically, reply included).",
        "",
    ]
    for r in retrieval["rounds"]:
        fit = r.get("context")
        if fit is not None and fit.get("prompt_tokens_estimate") is not None:
            left_out = "; ".join(
                f"`{_inline(x['chunk_id'])}` ({_inline(x['reason'])})" for x in r["left_out"]
            )
            out.append(
                f"- Round {r['round']}: prompt about {fit['prompt_tokens_estimate']} tokens, "
                f"reply up to {fit['max_tokens_interrogation']}; "
                + (f"left out: {left_out}." if left_out else "nothing left out.")
            )
        if r.get("context_overflow"):
            out.append(
                f"- Round {r['round']}: the server found the prompt too long for its window: "
                f"{_inline(r['context_overflow'])}"
            )
    return [*out, ""]


def _candidates_md(report: RunReport) -> list[str]:
    out = ["## Candidate answers", ""]
    if not report["candidates"]:
        return [*out, "No run produced a candidate answer.", ""]
    out += [
        "| rank | answer | conclusion | grounded | flags | width | paths | max flow | runs |",
        "|---:|---|---|---|---|---:|---:|---:|---:|",
    ]
    for c in report["candidates"]:
        state = "refuted" if c["refuted"] else ("yes" if c["grounded"] else "no")
        flags = ", ".join(c["flags"]) or "-"
        answer, claim = _cell(c["answer"] or "(none)"), _cell(c["claim"])
        support = (c["width"], c["path_width"], f"{c['max_flow']:g}", c["run_support"])
        out.append(_row(c["rank"], answer, claim, state, flags, *support))
    failed = [(c, link) for c in report["candidates"] for link in c.get("failed_links", [])]
    if failed:  # the chain check's refusals, so a reader sees why a line does not count
        out += ["", "Links that do not count (chain check):", ""]
        out += [
            f"- {_inline(c['answer'] or c['node_id'])}: {link['src']} -> {link['dst']}: "
            f"{link['reason']} ({_inline(link['detail'])})"
            for c, link in failed
        ]
    set_aside = [(c, held) for c in report["candidates"] for held in c.get("set_aside", [])]
    if set_aside:  # derivations the argument rules refused: the reader sees what was not counted
        out += ["", "Arguments that do not count:", ""]
        out += [
            f"- {_inline(c['answer'] or c['node_id'])}: "
            f"{', '.join(ref['id'] for ref in held['claims'])}: {held['reason']}"
            for c, held in set_aside
        ]
    return [*out, ""]


def _givens_md(report: RunReport) -> list[str]:
    out = ["## Evidence cited", ""]
    if report["givens"]:
        # Corpus runs add where each sentence comes from (file, page, chunk).
        sourced = "retrieval" in report
        out += (
            ["| span | sentence | source | runs |", "|---|---|---|---|"]
            if sourced
            else ["| span | sentence | runs |", "|---|---|---|"]
        )
        for g in report["givens"]:
            given_source = g.get("citation")
            where = given_source["citation"] if given_source else "-"
            source = [_cell(where)] if sourced else []
            text = _cell(g["text"] or "")
            out.append(_row(f"`{g['span']}`", text, *source, ", ".join(g["run_ids"])))
    else:
        out.append("No given passed the citation check.")
    rejected = report["rejected_citations"]
    if rejected:
        out += ["", "Givens that failed the citation check (kept as unsupported assumptions):", ""]
        out += ["| run | node | claim | cited | reason |", "|---|---|---|---|---|"]
        for c in rejected:
            cited, reason = f"`{c['source'] or '-'}`", f"{c['reason']}: {_cell(c['detail'])}"
            out.append(_row(c["run_id"], f"`{c['node']}`", _cell(c["claim"]), cited, reason))
    return [*out, ""]


def _merges_md(report: RunReport) -> list[str]:
    out = ["## Merges, contradictions and attacks", ""]
    for m in report["merges"]:
        out.append(
            f"- {m['at']}: `{m['merged']}` ({_inline(m['merged_claim'] or '')}) merged into "
            f"`{m['kept']}` ({_inline(m['kept_claim'] or '')})"
        )
    for c in report["contradictions_created"]:
        a, b = c["pair"]
        first, second = (_inline(text or "") for text in c["claims"])
        out.append(f"- {c['at']}: contradiction `{a}` ({first}) vs `{b}` ({second})")
    for attack in report["attacks"]:
        verdict = "counted" if attack["counted"] else "set aside"
        out.append(
            f"- attack `{attack['src']}` → `{attack['dst']}` drawn by {len(attack['runs'])} "
            f"run(s) against a claim {attack['target_runs']} run(s) assert: {verdict}"
        )
    if len(out) == 2:
        out.append("None.")
    return [*out, ""]


def _paths_md(report: RunReport) -> list[str]:
    chosen = report["chosen"]
    if chosen["node_id"] is None:
        return []
    out = [
        "## Independent lines of evidence for the answer",
        "",
        "Each line is one argument: claims that together derive the answer (the reasons a run "
        "lists for a claim are all needed). No two lines share a claim.",
        "",
    ]
    for i, argument in enumerate(chosen["arguments"], 1):
        # A working's LaTeX is shown as the plain text it says (report.json keeps the claim).
        claims = "; ".join(
            f"{_inline(readable_latex(step['claim']))} (`{step['id']}`)" for step in argument
        )
        out.append(f"{i}. {claims}")
    if chosen["arguments_capped"]:
        out += ["", "The argument search hit its cap: the width shown is a lower bound."]
    if chosen["argument_cut"]:
        cut = ", ".join(f"`{n}`" for n in chosen["argument_cut"])
        out += ["", f"Smallest set of claims whose failure would leave no argument: {cut}."]
    out += [
        "",
        f"Node-disjoint evidence paths (each premise counted apart): {len(chosen['paths'])}.",
    ]
    for i, path in enumerate(chosen["paths"], 1):
        chain = " → ".join(f"`{step['id']}`" for step in path)
        out.append(f"{i}. {chain}")
    return [*out, ""]


def _graph_md(report: RunReport) -> list[str]:
    graph = report["graph"]
    if not graph["nodes"]:
        return []
    lines = [*report["chosen"]["arguments"], *report["chosen"]["paths"]]
    priority = list(dict.fromkeys(step["id"] for line in lines for step in line))
    disputed = [
        c["id"] for pair in report["remaining_disputes"]["contradiction_pairs"] for c in pair
    ]
    disputed += [d["id"] for d in report["remaining_disputes"]["isolated_load_bearing"]]
    chart = mermaid.flowchart(
        graph,
        chosen=report["chosen"]["node_id"],
        candidates=[c["node_id"] for c in report["candidates"]],
        surviving=[c["id"] for c in report["surviving_claims"]],
        disputed=disputed,
        priority=priority,
    )
    shown = len(graph["nodes"])
    note = []
    if shown > mermaid.DEFAULT_MAX_NODES:
        note = [
            f"Only {mermaid.DEFAULT_MAX_NODES} of {shown} claims are drawn (answers, their "
            "evidence and disputed claims first); report.json holds the whole graph.",
            "",
        ]
    legend = (
        "Blue: chosen answer / other candidates; green: surviving; amber: disputed; red dashed: "
        "refuted; grey: not grounded. Arrows: → supports, ⇢ assumes, ×-ended red: attacks."
    )
    return ["## Argument graph", "", *note, "```mermaid", chart, "```", "", legend, ""]


def _claims_md(report: RunReport) -> list[str]:
    out = ["## Surviving claims", ""]
    out += [f"- {_inline(c['claim'])} (`{c['id']}`)" for c in report["surviving_claims"]] or [
        "None."
    ]
    out += ["", "## Refuted claims", ""]
    out += [
        f"- {_inline(k['claim'])} (`{k['id']}`): {_inline(k['reason'] or '')}"
        for k in report["killed"]
    ] or ["None."]
    out += ["", "## Remaining disputes", ""]
    disputes = report["remaining_disputes"]
    for a, b in disputes["contradiction_pairs"]:
        out.append(
            f"- Contradiction: {_inline(a['claim'])} (`{a['id']}`) vs {_inline(b['claim'])} "
            f"(`{b['id']}`)"
        )
    for item in disputes["isolated_load_bearing"]:
        checked = "verified once, no verdict" if item["verified"] else "not verified"
        out.append(
            f"- Asserted by one run only, load-bearing for `{item['candidate']}`: "
            f"{_inline(item['claim'])} (`{item['id']}`; {checked})"
        )
    if not disputes["contradiction_pairs"] and not disputes["isolated_load_bearing"]:
        out.append("None.")
    return [*out, ""]


def _verifications_md(report: RunReport) -> list[str]:
    if not report["verifications"]:
        return []
    out = [
        "## Verifications",
        "",
        "| round | claim | supported | refuted | not determinable | no vote | outcome |",
        "|---:|---|---:|---:|---:|---:|---|",
    ]
    for v in report["verifications"]:
        t = v["tally"]
        claim = f"{_cell(v['claim'])} (`{v['node_id']}`)"
        votes = (t["supported"], t["refuted"], t["not_determinable"], t["no_vote"])
        out.append(_row(v["round"], claim, *votes, v["outcome"]))
    return [*out, ""]


def _hops_md(report: RunReport) -> list[str]:
    hops = report["hops"]
    if hops is None:
        return []
    plan = "; ".join(hops["plan"]) if hops["plan"] else "none"
    answer = f"`{_inline(hops['answer'])}`" if hops["answer"] else "none"
    out = [
        "## Hop by hop",
        "",
        f"Asked because: {_inline(hops['trigger'])}. Plan (from the "
        f"{hops['plan_source'] or 'model'}, {hops['plan_outcome']}): "
        f"{_inline(plan)}"
        + (f" (not followed: {_inline(hops['plan_problem'])})" if hops["plan_problem"] else "")
        + f". Answer from the hops: {answer}, as run "
        f"`{hops['run_id']}`, in {hops['calls']} call(s).",
        "",
    ]
    if hops["hops"]:
        out += ["| hop | asked | sentence | answer | status |", "|---:|---|---|---|---|"]
        for hop in hops["hops"]:
            where = f"`{hop['sentence']}`" if hop["sentence"] else "-"
            status = hop["status"] + (f": {hop['detail']}" if hop["status"] != "found" else "")
            out.append(
                _row(
                    hop["number"],
                    _cell(hop["asked"]),
                    where,
                    _cell(hop["answer"] or "-"),
                    _cell(status),
                )
            )
        out.append("")
    return out


def _runs_md(report: RunReport) -> list[str]:
    out = [
        "## Interrogation runs",
        "",
        "| run | parse outcome | nodes | edges | answer | conclusion | notes |",
        "|---|---|---:|---:|---|---|---|",
    ]
    for run in report["runs"]:
        notes = "; ".join(run["errors"][:3]) + (" …" if len(run["errors"]) > 3 else "")
        size = (run["accepted_nodes"], run["accepted_edges"])
        said = (_cell(run["answer"] or "-"), _cell(run["conclusion_claim"] or "-"))
        out.append(_row(run["run_id"], run["outcome"], *size, *said, _cell(notes)))
    return [*out, ""]


def _calls_md(report: RunReport) -> list[str]:
    t = report["totals"]
    out = [
        "## Calls and cost",
        "",
        f"Logical calls: {t['calls']} (cap {t['budget_calls']}; the cap counts logical calls, "
        f"HTTP retries are counted apart), HTTP attempts: {t['http_attempts']}, failed calls: "
        f"{t['failed_calls']}.",
        f"Tokens: {_num(t['prompt_tokens'])} prompt + {_num(t['completion_tokens'])} "
        f"completion. Cost: {_usd(t['cost_usd'])} (known part {_usd(t['cost_usd_known'])}, "
        f"{t['calls_cost_unknown']} call(s) of unknown cost).",
        "",
        "| # | step | role | subject | ok | tokens in/out | cost | latency s | attempts | parse |",
        "|---:|---|---|---|---|---|---|---:|---:|---|",
    ]
    for i, c in enumerate(report["calls"], 1):
        what = (i, c["step"], c["role"], f"`{c['subject']}`", "yes" if c["ok"] else "no")
        tokens = f"{_num(c['prompt_tokens'])}/{_num(c['completion_tokens'])}"
        spent = (tokens, _usd(c["cost_usd"]), f"{c['latency_s']:.2f}", c["attempts"])
        out.append(_row(*what, *spent, c["parse_outcome"] or "-"))
    return [*out, ""]


def _settings_md(report: RunReport) -> list[str]:
    config = ", ".join(f"{k}={v}" for k, v in report["config"].items())
    versions = ", ".join(f"{v}" for v in report["prompt_versions"].values())
    out = ["## Settings", "", f"- Config: {config}", f"- Prompts: {versions}"]
    for model, tally in report["schema_compliance"].items():
        out.append(
            f"- Schema compliance of `{model}`: {tally['strict']} strict, {tally['repaired']} "
            f"repaired, {tally['salvaged']} salvaged, {tally['dropped']} dropped"
        )
    timing = report["timing"]
    out.append(
        f"- Timing: started {timing['started_at']}, wall {timing['wall_s']:.2f} s, waiting on "
        f"the model {timing['model_wait_s']:.2f} s"
    )
    if report["trace_file"]:
        out.append(f"- Trace: `{report['trace_file']}`")
    return [*out, ""]


_SECTIONS: tuple[Callable[[RunReport], list[str]], ...] = (
    _retrieval_md,
    _candidates_md,
    _paths_md,
    _givens_md,
    _graph_md,
    _claims_md,
    _merges_md,
    _verifications_md,
    _hops_md,
    _runs_md,
    _calls_md,
    _settings_md,
)
"""The sections under the answer's summary, in the order the page shows them."""


def _limits_md(limits: Limits) -> list[str]:
    """The run's bounds in one line, and a line for each one that bit."""
    parts = []
    if limits.get("budget_seconds") is not None:
        parts.append(f"wall-clock budget {limits['budget_seconds']:g} s")
    if limits.get("max_tokens"):
        parts.append(
            "max_tokens " + ", ".join(f"{role} {n}" for role, n in limits["max_tokens"].items())
        )
    http = limits.get("http")
    if http:
        parts.append(
            f"{http['timeout_s_per_attempt']:g} s per HTTP attempt, "
            f"{http['max_retries']} retries at most"
        )
    out = [f"- Limits: {'; '.join(parts)}"] if parts else []
    if limits.get("deadline_reached"):
        out.append(
            f"- **The wall-clock budget ran out**: {limits['calls_not_made_for_time']} call(s) "
            "were not made"
        )
    if limits.get("calls_cut_at_max_tokens"):
        out.append(f"- Calls cut off at max_tokens: {limits['calls_cut_at_max_tokens']}")
    if limits.get("backend_error"):
        out.append(f"- **The backend became unusable**: {_inline(limits['backend_error'])}")
    return out


def _inline(text: object) -> str:
    """Model text made safe for one Markdown line: no line breaks, and no raw HTML (a ``<``
    is backslash-escaped, which Markdown shows as a plain ``<``; ``>`` only starts a quote at
    the beginning of a line, so only a leading one is escaped)."""
    flat = " ".join(str(text).split()).replace("<", "\\<")
    return "\\" + flat if flat.startswith(">") else flat


def _row(*cells: object) -> str:
    """One row of a Markdown table."""
    return "| " + " | ".join(map(str, cells)) + " |"


def _cell(text: object) -> str:
    return _inline(text).replace("|", "\\|")


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.6f}"


def _num(value: int | None) -> str:
    return "unknown" if value is None else str(value)
