"""MkDocs hook: tables generated from the code, and the repository files the pages show.

* ``<!-- observation-table -->`` and ``<!-- action-table -->`` in a page become
  tables built from `observation_blocks` / `BLOCK_MEANINGS` and
  `ActionEncoding`, so the documented layout cannot drift from the code;
* ``scripts/results/`` (figures and results pages) and ``CHANGELOG.md`` join
  the site, so pages link to them and a broken link fails the strict build.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
EXTRA_FILES = ("CHANGELOG.md",)
RESULTS = ROOT / "scripts" / "results"


def observation_table(max_players: int = 2) -> str:
    from rouba_env.encoding.observation import BLOCK_MEANINGS, observation_layout

    rows = ["| indices (2 seats) | block | size | content |", "|---|---|---|---|"]
    for name, block in observation_layout(max_players).items():
        span = f"{block.start}" if block.stop - block.start == 1 else f"{block.start}-{block.stop - 1}"
        rows.append(f"| {span} | `{name}` | {block.stop - block.start} | {BLOCK_MEANINGS[name]} |")
    return "\n".join(rows)


def action_table() -> str:
    from rouba_env.encoding.actions import ActionEncoding
    from rouba_env.rules.config import preset
    from rouba_env.rules.core import (
        JOKER_KIND_OFFSET,
        NUM_KINDS,
        TARGET_DISCARD,
        TARGET_PILE_OFFSET,
        TARGET_TABLE,
        TARGET_TABLE_JOKER,
    )

    encoding = ActionEncoding(preset("standard"))
    rows = ["| part | values | meaning |", "|---|---|---|",
            f"| `kind` | 0..{JOKER_KIND_OFFSET - 1} | play a natural card of rank A, 2, ..., K |",
            f"| `kind` | {JOKER_KIND_OFFSET}..{NUM_KINDS - 1} | play a joker named as rank `kind - "
            f"{JOKER_KIND_OFFSET}` (a discarded joker uses kind {JOKER_KIND_OFFSET}) |",
            f"| `target` | {TARGET_TABLE} | capture a table card of the shown rank (every one with `take_all`) |",
            f"| `target` | {TARGET_DISCARD} | discard to the table |",
            f"| `target` | {TARGET_TABLE_JOKER} | capture a joker lying on the table |",
            f"| `target` | {TARGET_PILE_OFFSET} + k | the pile of the seat k places to the left (k = 0: own "
            f"pile, else a steal) |"]
    return (f"`Discrete({NUM_KINDS} * ({TARGET_PILE_OFFSET} + max_players))`: index = `kind * "
            f"({TARGET_PILE_OFFSET} + max_players) + target` (a 2-player table has {encoding.size} actions).\n\n"
            + "\n".join(rows))


def train_config_table() -> str:
    from rouba_training.config import GROUP_OF, HELP, setting_fields

    rows = ["| setting | group | default | meaning |", "|---|---|---|---|"]
    for field in setting_fields():
        default = " ".join(map(str, field.default)) if isinstance(field.default, tuple) else field.default
        shown = f"`{default!s}`" if str(default) != "" else "(none)"
        flag = field.name.replace("_", "-")
        rows.append(f"| <code style=\"white-space: nowrap\">--{flag}</code> | `{GROUP_OF[field.name]}` | {shown} | "
                    f"{field.metadata[HELP]} |")
    return "\n".join(rows)


def on_files(files, config):
    site = config["site_dir"]
    for source in EXTRA_FILES:
        files.append(File(source, str(ROOT), site, config["use_directory_urls"]))
    for path in sorted(RESULTS.glob("*")):
        if path.suffix in (".png", ".md"):
            files.append(File(str(path.relative_to(ROOT / "scripts")), str(ROOT / "scripts"), site,
                              config["use_directory_urls"]))
    return files


def on_page_markdown(markdown, page, config, files):
    return (markdown.replace("<!-- observation-table -->", observation_table())
            .replace("<!-- action-table -->", action_table())
            .replace("<!-- train-config-table -->", train_config_table()))
