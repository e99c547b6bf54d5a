"""Chapter 7's page (notebooks/bridge.ipynb) as a reader sees it: the verdict tables shown as
tables (pandas Stylers), not as raw Markdown pipes; nothing here is computed."""

from modlib import stats
from modlib.bridge import findings


def _claims(outcome):
    v = stats.Verdict(outcome, "made up")
    return {f: [stats.Claim(f"{k}-{f}", v.reproduced, "made up", v) for k in findings.KINDS]
            for f in ("a", "b")}


def test_the_verdict_frame_keeps_every_row_mark_and_column():
    for outcome in stats.MARKS:
        table = findings.verdict_table(_claims(outcome))
        frame = findings.verdict_frame(table).data
        assert list(frame.columns) == ["claim, on the failing networks", "formulation (a)", "formulation (b)",
                                       "what it means"]
        assert list(frame.iloc[:, 0]) == [findings.typeset(v) for v in findings.KINDS.values()]
        assert (frame.iloc[:, 1:3] == f"{stats.MARKS[outcome]} {outcome}").all().all()
        assert list(frame.iloc[:, 3]) == [findings.typeset(findings.meaning(k, [outcome] * 2)) for k in findings.KINDS]
        assert not frame.iloc[:, 0].str.contains(r"\bY1\b|\bX2\b").any()  # typeset as the prose's Y_1, X_2
        assert "|" not in findings.verdict_frame(table).to_html().replace("&#124;", "")


def test_a_control_that_holds_reads_as_against_the_mask():
    """Issue 57: the random-mask control's "holds" is bad news for the question; its row says so."""
    assert findings.meaning("repair-excl-random", [stats.REPRODUCED] * 2).startswith("against the mask")
    assert findings.meaning("repair-excl-needs-mask", [stats.REPRODUCED] * 2).startswith("for the mask")
    both = findings.meaning("repair-excl-random", [stats.UNDECIDED, stats.REPRODUCED])
    assert both.startswith("(a) not settled here; (b) against the mask"), both


def test_the_explorer_shows_a_huge_reliance_readably():
    from modlib.bridge import explorer

    assert explorer.reliance_text(3.2e9) == "> 1000"
    assert explorer.reliance_text(0.456) == "0.46"
    table = explorer._numbers_table([("full network", 0.5, 1.0, 3.2e9, "—")])
    assert "&gt; 1000" in table and "e+09" not in table
    for header in ("held-out accuracy", "train accuracy", "reliance on x2", "weights kept"):
        assert f">{header}</th>" in table


def test_the_theory_pages_diagram_fits_the_page():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from modlib import plots
    from modlib.bridge import figures

    fig = figures.diagram_evidence()
    assert fig.get_size_inches()[0] <= plots.COLUMN + 1e-9 and len(fig.axes) == 3
    # the correlation panel's dots rise, in the direction experiment 3 registers (more overlap above
    # chance, higher held-out accuracy)
    from scipy.stats import spearmanr

    score, acc = fig.axes[2].collections[0].get_offsets().T
    assert spearmanr(score, acc).statistic > 0.8
    plt.close(fig)


def test_the_appendix_summarises_the_toy_networks_in_one_screen():
    """Issue 57: the 200 per-network rows are folded; the page shows one row per measure, the mean
    over each formulation's failing networks with its t interval, and no '-0.00'."""
    import pandas as pd

    rows = pd.DataFrame({"formulation": ["a"] * 4 + ["b"] * 3, "seed": [0, 1, 2, 3, 0, 1, 2],
                         "fails": [True, True, False, True, True, True, True],
                         "network: held-out": [0.5, 0.7, 0.99, 0.6, 0.8, 0.8, 0.8],
                         "overlap": [-0.001, -0.002, 0.5, -0.003, 0.1, 0.2, 0.3]})
    summary = findings.summary_table(rows)
    assert list(summary.columns) == ["measure", "(a): 3 failing networks", "(b): 3 failing networks"]
    assert list(summary["measure"]) == ["network: held-out", "overlap"]
    mean, low, high = stats.t_interval([0.5, 0.7, 0.6])
    assert summary.iloc[0, 1] == f"{mean:.2f} ({low:.2f} to {high:.2f})"
    assert summary.iloc[0, 2] == "0.80"  # no spread, no interval
    assert summary.iloc[1, 1].startswith("0.00 (") and "-0.00" not in summary.iloc[1, 1]
