"""The front matter's typed facts about the runs, checked against their sources: which chapters'
stored full results were made on a GPU (each result's own record, ``device``), and chapter 2's
seeds at ``full`` (its settings, :func:`modlib.compositional_sprites.causes.seeds_text`)."""

from __future__ import annotations

import re
from pathlib import Path

from modlib import claims, results

ROOT = Path(__file__).resolve().parents[1]


def _gpu_chapters() -> set[int]:
    """The numbers of the chapters with a stored full result whose record names a CUDA device."""
    return {i + 1 for i, chapter in enumerate(claims.CHAPTERS)
            if any(str(d).startswith("cuda") for d in
                   results.recorded(results.default_root() / "full" / chapter, "device").values())}


def test_the_pages_name_the_chapters_whose_stored_results_a_gpu_made():
    """welcome.md and how_to_run.md say the book was computed on 2 CPU cores; where they name
    chapters whose runs a GPU made ("chapter 4's ... GPU", in one sentence), those are the chapters
    whose stored results' records say so."""
    gpu = _gpu_chapters()
    for page in ("welcome", "how_to_run"):
        text = " ".join((ROOT / "book" / f"{page}.md").read_text().split())
        named = {int(n) for sentence in re.split(r"(?<=[.;:])\s", text) if "GPU" in sentence
                 and ("2 CPU cores" in sentence or "2-core" in sentence)
                 for n in re.findall(r"chapter (\d)'s", sentence)}
        assert named == gpu, f"book/{page}.md names chapters {sorted(named)} as run on a GPU; " \
                             f"the stored results' records say {sorted(gpu)}"


def test_how_to_run_gives_chapter_2s_full_seeds_as_its_settings_do():
    from modlib.compositional_sprites import causes

    s = causes.causes_settings("full")
    words = causes.seeds_text({row: s.seeds_of(row) for row in s.rows}, {row: s.more_seeds for row in causes.MORE})
    assert words in (ROOT / "book" / "how_to_run.md").read_text(), words
