"""The documentation: every internal link resolves, every ``sh`` block runs, every ``console`` command exists.

Reads README.md and the docs/ folder as they are when the test runs (pages other engineers add are included).
The convention is in docs/development.md.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from idemwatch.cli import main

REPO = Path(__file__).resolve().parents[3]

FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)[^\n]*\n(.*?)^\1[ \t]*$", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
SHELL_START = ("idemwatch", "scripts/dev", ".venv/bin/idemwatch")


def _pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def _blocks(page: Path) -> list[tuple[str, str, int]]:
    """(info string, body, line number) of each fenced block."""
    text = page.read_text(encoding="utf-8")
    return [(m.group(2).lower(), m.group(3), text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


def _prose(text: str) -> str:
    """Text outside fenced blocks and inline code (links there are examples, not links)."""
    text = FENCE.sub("", text)
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", text, flags=re.DOTALL)


def _slug(heading: str) -> str:
    """GitHub's heading anchor: lower case, markup and punctuation dropped, spaces to hyphens."""
    h = re.sub(r"`|\*\*|__", "", heading.strip().lower())
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)
    return re.sub(r"[^\w\- ]", "", h).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            s = _slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out


def _links() -> list[tuple[Path, str]]:
    return [(page, m.group(1)) for page in _pages() for m in LINK.finditer(_prose(page.read_text(encoding="utf-8")))]


def test_docs_folder_and_readme_size():
    assert (REPO / "docs").is_dir() and len(_pages()) >= 10
    assert (REPO / "README.md").stat().st_size <= 12 * 1024 + 512  # "at most about 12 KB"


# Pages other engineers announced and write in their own branches (issue 15's docs convention). Until each lands,
# a link to it is reported as a warning rather than a failure, so this branch can merge first; delete a name here
# once its page is on main (the test then fails if the page goes missing again).
ANNOUNCED: set[str] = set()


def test_every_internal_link_resolves():
    bad = []
    pending = set()
    checked = 0
    for page, target in _links():
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        checked += 1
        if not dest.exists() and dest.parent == REPO / "docs" and dest.name in ANNOUNCED:
            pending.add(dest.name)
        elif not dest.exists():
            bad.append(f"{page.relative_to(REPO)}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            bad.append(f"{page.relative_to(REPO)}: {target} (no heading #{anchor})")
    assert checked > 20
    assert not bad, "\n".join(bad)
    if pending:
        import warnings

        warnings.warn(f"docs pages linked but not written yet: {', '.join(sorted(pending))}", stacklevel=1)


def test_the_link_checker_sees_broken_links(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# Title here\n\n[ok](#title-here) [bad](#nope) `[code](x.md)`\n\n```sh\n[x](y.md)\n```\n")
    links = [m.group(1) for m in LINK.finditer(_prose(page.read_text()))]
    assert links == ["#title-here", "#nope"]
    assert _anchors(page) == {"title-here"}


def _commands(body: str) -> list[str]:
    """The shell command lines of a block: continuations joined, comments dropped. In a transcript (a block whose
    first line starts with ``$ ``) only the ``$ `` lines are commands; the others are output."""
    transcript = body.lstrip().startswith("$ ")
    out, cur = [], ""
    for raw in body.splitlines():
        line = raw.rstrip()
        if not cur:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if transcript:
                if not line.startswith("$ "):
                    continue
                line = line[2:]
        cur += line[:-1] + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            out.append(cur.strip())
            cur = ""
    return out


def _idemwatch_argv(command: str) -> list[str] | None:
    """argv after ``idemwatch`` for a command line that runs it (env assignments skipped), else None."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return None
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        words = words[1:]
    if not words or Path(words[0]).name != "idemwatch":
        return None
    return words[1:]


def _check_against_cli(argv: list[str]) -> list[str]:
    """Problems with one idemwatch command line: unknown subcommands or options (placeholders [...] allowed)."""
    ctx = click.Context(main, info_name="idemwatch")
    cmd: click.Command = main
    opts = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} | {"--help", "-h"}
    problems = []
    for word in argv:
        w = word.strip("[]").split("=")[0]
        if w in ("|", "&&", ";", "&", ">", "2>&1"):
            break
        if w.startswith("-"):
            if w not in opts:
                problems.append(f"unknown option {w} for '{cmd.name}'")
            continue
        if isinstance(cmd, click.Group):
            sub = cmd.get_command(ctx, w)
            if sub is None:
                problems.append(f"unknown command {w!r} under '{cmd.name}'")
                break
            cmd = sub
            opts = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} | {"--help", "-h"}
    return problems


def test_every_shell_block_is_marked_and_every_shown_command_exists():
    problems = []
    for page in _pages():
        for info, body, line in _blocks(page):
            cmds = _commands(body)
            where = f"{page.relative_to(REPO)}:{line}"
            if cmds and cmds[0].startswith(SHELL_START) and info not in ("sh", "console"):
                problems.append(f"{where}: a shell block marked {info!r}: use sh (run) or console (shown)")
            if info in ("sh", "console"):
                for c in cmds:
                    argv = _idemwatch_argv(c)
                    if argv is not None:
                        problems += [f"{where}: {c[:60]}: {p}" for p in _check_against_cli(argv)]
            if info == "sh" and re.search(r"\[--|\.\.\.\]|<[A-Z_]+>", body):
                problems.append(f"{where}: an sh block with placeholders: mark it console")
    assert not problems, "\n".join(problems)


def test_commands_of_a_block():
    assert _commands("# c\nidemwatch a \\\n  --b 1\n\nidemwatch c\n") == ["idemwatch a    --b 1", "idemwatch c"]
    assert _commands("$ idemwatch q\nError: x\n$ ls\n") == ["idemwatch q", "ls"]


def test_the_command_checker_sees_unknown_options():
    assert _check_against_cli(["query", "--start", "1h", "q", "f"]) == []
    assert _check_against_cli(["alarms", "deploy", "--config", "x", "[--prune]", "--dry-run"]) == []
    assert _check_against_cli(["query", "--since", "1h"]) == ["unknown option --since for 'query'"]
    assert _check_against_cli(["alarms", "nosuch"]) == ["unknown command 'nosuch' under 'alarms'"]


@pytest.fixture(scope="module")
def docs_root(source_copy) -> Path:
    """A fresh copy of the repository with the demo's data in idemwatch-data/, as after the quick start (a smaller
    fleet than the default, 2,000 events over an hour: the commands shown do not depend on its size)."""
    root = source_copy("repo")
    p = subprocess.run([str(Path(sys.executable).parent / "idemwatch"), "demo", "--no-serve", "--events", "2000",
                        "--duration", "3600"], cwd=root,
                       capture_output=True, text=True, timeout=600, env=_env(), check=False)
    assert p.returncode == 0, p.stderr[-3000:]
    return root


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IDEMWATCH_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _sh_blocks() -> list[tuple[str, str]]:
    return [(f"{page.relative_to(REPO)}:{line}", body) for page in _pages() for info, body, line in _blocks(page)
            if info == "sh"]


@pytest.mark.slow
@pytest.mark.parametrize(("where", "body"), _sh_blocks(), ids=[w for w, _ in _sh_blocks()])
def test_sh_block_runs(docs_root, where, body):
    p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", body], cwd=docs_root, capture_output=True, text=True,
                       timeout=300, env=_env(), check=False)
    assert p.returncode == 0, f"{where} exited {p.returncode}:\n{body}\n--- stdout\n{p.stdout[-2000:]}\n" \
                              f"--- stderr\n{p.stderr[-2000:]}"
    assert "Traceback" not in p.stderr
