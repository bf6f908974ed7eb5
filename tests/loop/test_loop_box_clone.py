"""The box's clone and the boundary's probe, as cheap as they can be without giving
anything up.

- A box's clone (the maker's tree, a fresh tree for the gates) holds the commit it is
  made for even when that commit is on no branch (relay's candidate), on a branch of its
  own, with no remote, the source's tags on its history, and objects of its own: none
  shares a file with the source's (a box could rewrite a shared one in place). Where
  git's transport is told to refuse such a commit, the clone still holds it. It holds
  that commit's history alone: no other branch's or tag's objects. The folder is gone
  afterwards.
- The probe of the boundary's level runs once a boot: a NAMESPACES verdict is kept in
  relay's cache folder for the same boot, kernel settings and environment, and another
  environment probes again; RELAY_SANDBOX=env still says env-level only.
- `relay loop run` loads neither the protocol's models nor pydantic.

Real git repositories, real boxes where the machine makes them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from relay.ratchet import sandbox


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def source(tmp_path: Path) -> Path:
    root = tmp_path / "source"
    root.mkdir()
    git("init", "-q", "-b", "main", cwd=root)
    git("config", "user.name", "Person", cwd=root)
    git("config", "user.email", "person@example.invalid", cwd=root)
    (root / "a.py").write_text("A = 1\n")
    git("add", "-A", cwd=root)
    git("commit", "-qm", "one", cwd=root)
    git("tag", "v1", cwd=root)
    git("remote", "add", "origin", "https://example.invalid/repo.git", cwd=root)
    return root


def off_branch(root: Path) -> str:
    """A commit of HEAD plus one file, on no branch (as relay's candidate is)."""
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], input="B = 2\n", cwd=root,
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    index = {**os.environ, "GIT_INDEX_FILE": str(root / ".git" / "tmp-index")}
    for args in (
        ["read-tree", "HEAD"],
        ["update-index", "--add", "--cacheinfo", f"100644,{blob},b.py"],
    ):
        subprocess.run(["git", *args], cwd=root, env=index, check=True)
    tree = subprocess.run(
        ["git", "write-tree"], cwd=root, env=index, capture_output=True, text=True, check=True
    ).stdout.strip()
    (root / ".git" / "tmp-index").unlink()
    return git("commit-tree", tree, "-p", "HEAD", "-m", "candidate", cwd=root)


def embargo(source: Path, *, tag: str | None = None) -> str:
    """An unmerged branch ``embargoed`` off HEAD holding a plan no box may see (and an
    annotated ``tag`` on it); the source left on main. Its commit."""
    git("checkout", "-qb", "embargoed", cwd=source)
    (source / "plan.txt").write_text("EMBARGOED: the unannounced plan\n")
    git("add", "plan.txt", cwd=source)
    git("commit", "-qm", "EMBARGOED plan", cwd=source)
    if tag is not None:
        git("tag", "-a", tag, "-m", "EMBARGOED release", cwd=source)
    embargoed = git("rev-parse", "HEAD", cwd=source)
    git("checkout", "-q", "main", cwd=source)
    return embargoed


def inodes(folder: Path) -> set[tuple[int, int]]:
    return {(p.stat().st_dev, p.stat().st_ino) for p in folder.rglob("*") if p.is_file()}


def check_box(source: Path, commit: str) -> None:
    with sandbox.standalone(source, commit, "relay-loop/G1", hidden=()) as box:
        tree = box.tree
        assert git("rev-parse", "HEAD", cwd=tree) == commit
        assert git("symbolic-ref", "HEAD", cwd=tree) == "refs/heads/relay-loop/G1"
        assert (tree / "b.py").read_text() == "B = 2\n" and (tree / "a.py").exists()
        assert git("remote", cwd=tree) == "", "the box's clone has no remote"
        assert git("tag", cwd=tree) == "v1"
        objects = tree / ".git" / "objects"
        assert not (objects / "info" / "alternates").exists()
        assert not inodes(objects) & inodes(source / ".git" / "objects"), "objects shared"
        folder = box.folder
    assert not folder.exists()


def test_a_box_clone_holds_a_commit_on_no_branch_with_objects_of_its_own(source: Path) -> None:
    commit = off_branch(source)
    check_box(source, commit)
    assert git("status", "--porcelain", cwd=source) == "", "the source is left as it was"


def test_a_box_holds_the_tags_however_the_source_keeps_them(source: Path) -> None:
    """Tags only in packed-refs reach the box as loose ones do; a source with no tag at
    all (nothing under refs/tags, none packed) gives a box with none."""
    commit = off_branch(source)
    git("pack-refs", "--all", cwd=source)
    assert not any((source / ".git/refs/tags").iterdir()), "the tag is packed"
    check_box(source, commit)
    git("tag", "-d", "v1", cwd=source)
    assert sandbox._tagless(source / ".git")
    with sandbox.standalone(source, commit, "relay-loop/G1", hidden=()) as box:
        assert git("tag", cwd=box.tree) == ""
        assert git("rev-parse", "HEAD", cwd=box.tree) == commit


def test_where_the_transport_refuses_that_commit_its_objects_are_copied(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    # the first protocol version offers only what a ref names, and no commit beyond that
    (home / ".gitconfig").write_text("[protocol]\n\tversion = 0\n")
    monkeypatch.setenv("HOME", str(home))
    commit = off_branch(source)
    refused = subprocess.run(
        ["git", "-c", "protocol.version=0", "fetch", "-q", str(source), commit],
        cwd=tmp_path / "home", capture_output=True, text=True, check=False,
        env={**os.environ, "GIT_DIR": str(tmp_path / "probe.git")},
    )  # fmt: skip
    assert refused.returncode != 0, "this git fetches any commit: the fallback is not reached"
    check_box(source, commit)


def test_a_box_holds_its_commits_history_alone_never_another_branchs_objects(
    source: Path, tmp_path: Path
) -> None:
    """An unmerged branch of the person's clone (and a tag on it) brings nothing into a
    box, whether the box is made from the clone or from a linked worktree of it; a tag
    on the commit's own history comes with it."""
    secret = git("rev-parse", f"{embargo(source, tag='v9')}:plan.txt", cwd=source)
    commit = off_branch(source)
    linked = tmp_path / "linked"
    git("worktree", "add", "-q", "--detach", str(linked), "main", cwd=source)
    for where in (source, linked):
        with sandbox.standalone(where, commit, "relay-loop/G1", hidden=()) as box:
            tree = box.tree
            assert git("rev-parse", "HEAD", cwd=tree) == commit
            held = git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=tree)
            assert secret not in held.split(), "the unmerged branch's file is in the box"
            every = subprocess.run(
                ["git", "cat-file", "--batch-all-objects", "--batch"],
                cwd=tree, capture_output=True, check=True,
            ).stdout  # fmt: skip
            assert b"EMBARGOED" not in every
            refs = git("for-each-ref", "--format=%(refname)", cwd=tree).split()
            assert refs == ["refs/heads/relay-loop/G1", "refs/tags/v1"], refs
            assert git("log", "--format=%s", cwd=tree).split() == ["candidate", "one"]


def held(tree: Path) -> set[str]:
    """Every object a box's repository holds."""
    listed = git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=tree)
    return set(listed.split())


def history(root: Path, *tips: str) -> set[str]:
    """Every object ``tips`` reach in ``root`` (a tag's own object with it)."""
    return {line.split()[0] for line in git("rev-list", "--objects", *tips, cwd=root).splitlines()}


def test_a_box_of_a_child_takes_its_parents_pack_and_packs_only_what_it_adds(
    source: Path,
) -> None:
    """A commit on one a box of this run was made of (relay's candidate on its baseline)
    is packed as that one's pack and one of its own new objects; each box holds its own
    copy, and the commit's history with its tags alone, even where another branch's
    commit was packed in between or a tag it was packed with went meanwhile."""
    git("tag", "-a", "v2", "-m", "second tag", cwd=source)
    base = git("rev-parse", "HEAD", cwd=source)
    embargoed = embargo(source)
    with sandbox.standalone(source, base, "relay-loop/G1", hidden=()) as box:
        assert held(box.tree) == history(source, base, "v2")
        first = {p.name for p in (box.tree / ".git/objects/pack").iterdir()}
    with sandbox.standalone(source, embargoed, "relay-loop/G1", hidden=()) as box:
        assert held(box.tree) == history(source, embargoed, "v2")
    commit = off_branch(source)
    with sandbox.standalone(source, commit, "relay-loop/G1", hidden=()) as box:
        assert held(box.tree) == history(source, commit, "v2")
        packs = {p.name for p in (box.tree / ".git/objects/pack").iterdir()}
    assert first < packs, "the parent's pack was not reused"
    [index] = [n for n in packs - first if n.endswith(".idx")]  # what the child adds
    shown = subprocess.run(
        ["git", "show-index"], input=next(sandbox._pack_folder().rglob(index)).read_bytes(),
        capture_output=True, check=True,
    ).stdout.split(b"\n")  # fmt: skip
    assert len([line for line in shown if line]) == 3, "not its commit, tree and blob alone"
    git("tag", "-d", "v2", cwd=source)  # a tag its packs were made with goes
    git("tag", "v3", cwd=source)  # and a new one comes on its history
    with sandbox.standalone(source, commit, "relay-loop/G1", hidden=()) as box:
        tree = box.tree
        assert git("rev-parse", "HEAD", cwd=tree) == commit
        assert held(tree) == history(source, commit, "v1"), "a gone tag or a branch came"
        assert git("tag", cwd=tree).split() == ["v1", "v3"]
        assert b"EMBARGOED" not in subprocess.run(
            ["git", "cat-file", "--batch-all-objects", "--batch"],
            cwd=tree, capture_output=True, check=True,
        ).stdout  # fmt: skip
        objects = tree / ".git" / "objects"
        assert not inodes(objects) & inodes(sandbox._pack_folder()), "a pack shared"
        assert not inodes(objects) & inodes(source / ".git" / "objects"), "objects shared"


def test_a_box_of_a_shallow_clone_holds_its_commit(source: Path, tmp_path: Path) -> None:
    shallow = tmp_path / "shallow"
    git("commit", "-q", "--allow-empty", "-m", "two", cwd=source)
    git("clone", "-q", "--depth", "1", f"file://{source}", str(shallow), cwd=tmp_path)
    commit = git("rev-parse", "HEAD", cwd=shallow)
    with sandbox.standalone(shallow, commit, "relay-loop/G1", hidden=()) as box:
        assert git("rev-parse", "HEAD", cwd=box.tree) == commit
        assert git("log", "--format=%s", cwd=box.tree) == "two"
        assert (box.tree / "a.py").read_text() == "A = 1\n"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """relay's cache folder of the test's own, and no verdict this process kept."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(sandbox.FORCE_ENV, raising=False)
    sandbox._probe.cache_clear()
    yield tmp_path / "cache" / "relay" / sandbox.PROBE_FILE
    sandbox._probe.cache_clear()


def probes_made(where: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """The boxes the probe makes in a temporary folder of the test's own, for one look."""
    where.mkdir(exist_ok=True)
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    before = where.stat().st_mtime_ns
    sandbox._probe.cache_clear()
    sandbox.level()
    return int(where.stat().st_mtime_ns != before)  # a probe's folder came and went


needs_namespaces = pytest.mark.skipif(
    sandbox.level() != sandbox.NAMESPACES, reason="no user namespaces here"
)


@needs_namespaces
def test_the_probe_runs_once_a_boot_and_again_for_another_environment(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "scratch"
    assert probes_made(scratch, monkeypatch) == 1 and sandbox.level() == sandbox.NAMESPACES
    [kept] = cache.read_text().split()
    assert len(kept) == 64 and oct(cache.stat().st_mode)[-3:] == "600"
    assert probes_made(scratch, monkeypatch) == 0, "a second process probed again"
    assert sandbox.level() == sandbox.NAMESPACES
    share, first = tmp_path / "shared", os.environ.get(sandbox.SHARE_ENV, "")
    share.mkdir()
    if os.getuid() == 0:  # writable by the boxes' user, as a person is told to make it
        os.chown(share, sandbox.BOX_ID, -1)
    monkeypatch.setenv(sandbox.SHARE_ENV, str(share))  # what a box shows changed: probe again
    assert probes_made(scratch, monkeypatch) == 1 and cache.read_text().split()[0] == kept
    assert probes_made(scratch, monkeypatch) == 0, "each environment's verdict is kept"
    monkeypatch.setenv(sandbox.SHARE_ENV, first)
    assert probes_made(scratch, monkeypatch) == 0, "the first environment's verdict is kept"
    cache.write_text("0" * 64 + "\n")  # a verdict for something else: never taken
    assert probes_made(scratch, monkeypatch) == 1 and sandbox.level() == sandbox.NAMESPACES
    monkeypatch.setenv(sandbox.FORCE_ENV, "env")
    assert sandbox.level() == sandbox.ENV_ONLY, "a kept verdict never raises the level"


# What `relay loop run` does not load before it starts: besides the protocol's models, the
# modules only another path uses (`loop init`'s spine, a goal verified on another node, a
# metric goal, a project's ini files, a contract written out, a proxy's login). Each
# iteration's process would pay for them (issue 29: the loop's fixed cost per iteration).
NOT_ON_THE_RUN = {
    "pydantic",
    "relay.protocol",
    "relay.edges.local",
    "aiohttp",
    "relay.loop.spine",
    "relay.loop.jobs",
    "relay.loop.metric",
    "configparser",
    "textwrap",
    "base64",
}


def test_the_loop_run_loads_no_protocol_models() -> None:
    code = (
        "import sys, json; from relay.cli import build_parser;"
        " import relay.commands.loop, relay.ratchet.engine;"
        " words = ['loop', 'run', '--maker', 'true']; build_parser(words).parse_args(words);"
        " print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = set(json.loads(done.stdout))
    assert "relay.loop.roster" in loaded, "the probe sees the run's own modules: this can fail"
    assert not NOT_ON_THE_RUN & loaded, sorted(NOT_ON_THE_RUN & loaded)


def test_a_judged_box_is_gone_when_relay_is(source: Path) -> None:
    """Its folder goes while relay goes on, and before relay's process ends."""
    code = (
        "import sys; from pathlib import Path; from relay.ratchet.sandbox import judged\n"
        "with judged(Path(sys.argv[1]), sys.argv[2], hidden=()) as box:\n"
        "    assert (box.tree / 'b.py').is_file()\n"
        "    print(box.folder)\n"
    )
    commit = off_branch(source)
    done = subprocess.run(
        [sys.executable, "-c", code, str(source), commit],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    folder = Path(done.stdout.strip())
    assert folder.name.startswith("relay-judge-") and not folder.exists()


def pushed(env: dict[str, str]) -> dict[str, str]:
    """The push URLs a role's environment gives git (by remote)."""
    keys = [env[f"GIT_CONFIG_KEY_{n}"] for n in range(int(env["GIT_CONFIG_COUNT"]))]
    values = [env[f"GIT_CONFIG_VALUE_{n}"] for n in range(int(env["GIT_CONFIG_COUNT"]))]
    return {k.split(".")[1]: v for k, v in zip(keys, values, strict=True) if k.endswith(".pushurl")}


def test_every_remote_a_boxs_clone_names_gets_a_push_url_that_leads_nowhere(
    source: Path, tmp_path: Path
) -> None:
    """git is asked once for the clones relay makes alike (their configuration is the
    same file), and again for one whose configuration names a remote of its own."""
    from relay.ratchet import roles

    work = tmp_path / "work"
    work.mkdir()
    roles._REMOTES.clear()
    with sandbox.standalone(source, git("rev-parse", "HEAD", cwd=source), "b", hidden=()) as box:
        assert pushed(roles.role_env(box.tree, work, {})) == {}
        assert len(roles._REMOTES) == 1
        assert pushed(roles.role_env(box.tree, work, {})) == {}
        git("remote", "add", "sneaky", str(source), cwd=box.tree)
        assert pushed(roles.role_env(box.tree, work, {})) == {"sneaky": roles.NO_PUSH_URL}
        assert len(roles._REMOTES) == 2
        config = box.tree / ".git" / "config"
        config.write_text(config.read_text() + f"[include]\n\tpath = {tmp_path / 'more'}\n")
        (tmp_path / "more").write_text(f'[remote "more"]\n\turl = {source}\n')
        env = roles.role_env(box.tree, work, {})
        assert pushed(env) == {"sneaky": roles.NO_PUSH_URL, "more": roles.NO_PUSH_URL}
        assert len(roles._REMOTES) == 2, "an included file's remotes were kept for its includer"
        # a file as long as what is read of it may go on past it; a clone whose git directory
        # names another (``commondir``) has that one's configuration too
        padded = "".join(f"# {n:06}\n" for n in range(1 << 17))
        config.write_text("[core]\n\tbare = false\n" + padded)
        assert pushed(roles.role_env(box.tree, work, {})) == {}
        config.write_text(config.read_text() + f'[remote "late"]\n\turl = {source}\n')
        assert pushed(roles.role_env(box.tree, work, {})) == {"late": roles.NO_PUSH_URL}
        config.write_text("[core]\n\tbare = false\n")
        assert pushed(roles.role_env(box.tree, work, {})) == {}
        (box.tree / ".git" / "commondir").write_text(f"{source / '.git'}\n")
        assert "origin" in pushed(roles.role_env(box.tree, work, {}))


def test_a_long_run_of_children_is_packed_whole_again_past_the_chains_bound(
    source: Path,
) -> None:
    """Each box of a commit on the last holds no more packs than the bound, and its
    commit's history whole."""
    sandbox._drop_packs()
    counts = []
    for n in range(sandbox.PACK_CHAIN + 3):
        git("commit", "-q", "--allow-empty", "-m", f"step {n}", cwd=source)
        head = git("rev-parse", "HEAD", cwd=source)
        with sandbox.standalone(source, head, "relay-loop/G1", hidden=()) as box:
            assert held(box.tree) == history(source, head, "v1")
            counts.append(len(list((box.tree / ".git/objects/pack").glob("*.pack"))))
    assert max(counts) == sandbox.PACK_CHAIN and counts[-1] < sandbox.PACK_CHAIN, counts


def test_a_replace_ref_brings_no_other_branchs_tag_or_objects_into_a_box(source: Path) -> None:
    """``git replace --graft`` that stitches an unmerged branch into main's history makes
    git's own walk follow it, and its tags read as merged: a box holds the history as it
    is, and none of that branch's tags or objects."""
    base = git("rev-parse", "HEAD", cwd=source)
    embargoed = embargo(source, tag="v9")
    (source / "m.py").write_text("M = 1\n")
    git("add", "m.py", cwd=source)
    git("commit", "-qm", "main", cwd=source)
    main = git("rev-parse", "HEAD", cwd=source)
    git("replace", "--graft", main, base, embargoed, cwd=source)
    commit = off_branch(source)
    assert "refs/tags/v9" in git("for-each-ref", f"--merged={commit}", "refs/tags", cwd=source)
    with sandbox.standalone(source, commit, "relay-loop/G1", hidden=()) as box:
        every = subprocess.run(
            ["git", "cat-file", "--batch-all-objects", "--batch"],
            cwd=box.tree, capture_output=True, check=True,
        ).stdout  # fmt: skip
        assert b"EMBARGOED" not in every
        assert git("tag", cwd=box.tree) == "v1"


def test_a_history_git_packs_in_several_files_reaches_the_box_whole(source: Path) -> None:
    """With ``pack.packSizeLimit`` git writes a history in several packs, one name a line:
    each is the box's, and the next box of the run (a child) is made from them too."""
    for n in range(6):
        (source / f"big{n}.bin").write_bytes(os.urandom(400 << 10))
        git("add", "-A", cwd=source)
        git("commit", "-qm", f"big {n}", cwd=source)
    git("config", "pack.packSizeLimit", "1m", cwd=source)
    commit = off_branch(source)
    for tip in (commit, off_branch(source)):
        with sandbox.standalone(source, tip, "relay-loop/G1", hidden=()) as box:
            assert git("rev-parse", "HEAD", cwd=box.tree) == tip
            packs = list((box.tree / ".git" / "objects" / "pack").glob("*.pack"))
            assert len(packs) > 1
            git("fsck", "--connectivity-only", cwd=box.tree)
            assert (box.tree / "big5.bin").stat().st_size == 400 << 10


ACROSS = """
import tempfile
from pathlib import Path
place, source, commit = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
tempfile.tempdir = str(place)
from relay.ratchet import sandbox
with sandbox.judged(source, commit, hidden=()) as box:
    assert box.folder.parent == place, box.folder
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=box.tree, capture_output=True,
                          text=True, check=True).stdout.strip()
    assert head == commit, head
    assert (box.tree / "b.py").read_text() == "B = 2\\n"
    subprocess.run(["git", "fsck"], cwd=box.tree, check=True, capture_output=True)
print("made")
"""


@pytest.mark.skipif(not shutil.which("unshare"), reason="unshare")
def test_a_box_is_made_where_the_temporary_folder_is_on_another_file_system(
    source: Path, tmp_path: Path
) -> None:
    """/tmp on tmpfs and the clone on a disk, as on many systems: git cannot rename the
    pack it writes beside the clone's objects into the box's folder, so relay streams it."""
    from tests.loop.test_loop_box_ahead import in_own_tmpfs

    done = in_own_tmpfs(tmp_path, ACROSS, str(source), off_branch(source))
    assert done.stdout.strip() == "made", done.stderr[-2000:]


def test_the_runs_folder_of_packs_is_made_again_when_it_is_gone(source: Path) -> None:
    """A cleaner of the temporary folder (or a person) removed it during a long run: the
    next box is still made, in a folder of packs made anew."""
    commit = off_branch(source)
    check_box(source, commit)
    first = sandbox._pack_folder()
    sandbox.remove_tree(first)
    check_box(source, commit)
    assert sandbox._pack_folder().is_dir() and sandbox._pack_folder() != first
