"""The maker's sandbox: a standalone clone of relay's own under relay's temporary folder
(no remote, no credential configuration, not a worktree of the person's clone), a scratch
HOME with an empty git configuration, and, where Linux lets an unprivileged process make
user and mount namespaces, the person's clone, its local remotes, relay's secrets and the
agent CLIs' folders hidden behind empty mounts, and the real HOME and every folder at the
top of / but the system's and the software's (/var, /srv, /home, /root, /run, /mnt, /work...)
empty but for what the command runs from (shown read-only; the credential files listed
here and those a folder shown whole holds stay hidden in it), for the maker's process tree
(which also sees a /proc of its own, so no parent's working directory leads back), a
/tmp of its own that holds its own box folder alone, and every other folder outside its
tree and scratch read-only (its own box folder too, but for its tree, scratch HOME,
temporary folder and the places relay names for it), so that nothing it writes outlives
the box and nothing relay reads back is a link it put there. A read-only folder
does not stop connect(): emptied, those folders hold no socket bound there, in another
network namespace or after the box started; what sockets remain in a folder shown are
hidden behind /dev/null, and /dev holds the harmless devices alone. An agent role gets a
copy of its own CLI's login in its scratch HOME. A relay run as root runs each box's
command as root of a user namespace of its own that is a user of that box's own outside
(one of :data:`BOX_IDS`, from the pid of the process it lives under), never the real
root nor another running box's: a process of another box, or of the boxes' shared user
:data:`BOX_ID`, neither signals it nor reaches its files through ``/proc``. Its box
folder is that user's; everything else it sees as it is, owners and modes: root's files
are no one's in the box, so only their bits for others hold (a 0600 or 0700 file of
root's is unreadable there, in a folder relay shows it too: a tool's, a virtualenv's,
relay's own); the folders above a shown one are made by relay, so one inside a folder of
root's alone (``/root``) is reached all the same. A share must be writable by the boxes'
shared user, :data:`BOX_ID` (relay says so and stops otherwise), and is bound through an
idmapped mount on which that user's files are the box's own user's: what the box leaves
there is :data:`BOX_ID`'s on disk, never root's nor its own user's, so the next box
(another user) changes it as its own. Where a share's file system cannot be idmapped,
the box runs as :data:`BOX_ID` itself. A file of that user's left set-user-ID would make
any local user who runs it that user, the owner of every share: relay (root) clears the
set-user-ID and set-group-ID bits and file capabilities of that user's files in each
share before a box starts, and a share is nosuid and nodev inside a box. While it runs,
a seccomp filter (x86_64 and aarch64) refuses it a set-user-ID or set-group-ID mode by
chmod, open or mknod (a folder's set-group-ID too), and openat2 and io_uring, whose modes
no filter sees, so nothing is left to clear once it is over (elsewhere it is cleared then
too); a file capability it gives is a user namespace's (root there is its user), which
grants nothing on the host. Nor does any box (a relay's run as root or not) make a
namespace of its own or mount: in a user namespace of its own its code would hold every
capability there, and in a mount namespace of its own could mount over, unmount or
remount what the box hid or made read-only (the kernel keeps a copied mount that hides
another locked, but the box does not rest on that alone); its command's own user
namespace is made by the set-up before the filter is loaded. Nor does a box give another
local account write access to what it writes (a share's, which that account would open
while the box runs and keep past the next walk): the filter refuses chmod with others'
write bit and every extended attribute (an access list's entry for others is that bit by
another name, a default list passes over the umask), and the box's umask holds that bit
(a process that clears its own umask is not stopped: the walk takes back what it made).

Ground rules: a same-user process cannot be stopped by environment variables alone, so the
boundary's level is said as it is: "namespaces" where the mounts hold, "env-level only"
where they cannot be made (``relay doctor`` and BOARD.md say which).
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import functools
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from relay.errors import LocalUsageError
from relay.loop.runenv import TOOL_VARIABLES, Bound, box_bounds
from relay.ratchet.egress import forwarder_command

ATTEMPT_RECORD = "attempt.dir"  # in the loop's work directory: the attempt folder in use
# the user and group a box of a relay run as root is outside its user namespace (a high
# id no system or container range hands out, never nobody, whom host processes run as):
# a file only root may read is unreadable in it by its mode, not only by a list of hidden
# paths; the box folder is given to it at each set-up, and relay, root, reads and
# removes it after
BOX_ID = 2**31 - 2
JUDGED_PREFIX = "relay-judge-"  # a judged box's folder, in the temporary folder
OWNER_FILE = "relay.owner"  # in a box folder: the run it is of (pid, start, boot)
NAMESPACES = "namespaces"
ENV_ONLY = "env-level only"
EXPLAIN_FILE = ".relay-explain.md"  # in the maker's tree, never part of the candidate
CANNOT_FILE = ".relay-cannot.md"
PRIVATE = (EXPLAIN_FILE, CANNOT_FILE)
PRIVATE_CAP = 64 * 1024  # what relay reads of a file the maker wrote for it
# what a real HOME keeps that could ship a change: git's, gh's, ssh's, the keyrings', relay's
HOME_SECRETS = (
    ".git-credentials",
    ".gitconfig",
    ".netrc",
    ".ssh",
    ".gnupg",
    ".config/gh",
    ".config/git",
    ".config/hub",
    ".config/relay",
    ".local/share/keyrings",
    ".password-store",
    ".docker",
    ".aws",
    # the package indexes', the clusters', the clouds' and the shells' own
    ".pypirc",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".nuget/NuGet/NuGet.Config",
    ".kube",
    ".azure",
    ".config/gcloud",
    ".terraform.d",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".node_repl_history",
    ".local/share/fish/fish_history",
    # other tools' logins: pip's and poetry's indexes, keyrings.alt's plaintext keyring,
    # the storage and cloud CLIs', 1Password's, helm's registries, Firebase's and npm
    # tools' stored logins, PHP's and Pulumi's
    ".pip/pip.conf",
    ".config/pip/pip.conf",
    ".config/pypoetry/auth.toml",
    ".local/share/python_keyring",
    ".config/rclone",
    ".s3cfg",
    ".boto",
    ".config/configstore",
    ".config/op",
    ".op",
    ".config/helm",
    ".config/composer/auth.json",
    ".composer/auth.json",
    ".pulumi/credentials.json",
    ".databrickscfg",
    ".config/doctl",
    ".oci",
)
# the machine's password hashes (a box of a relay run as root reads what only root may)
# and the logins the system-wide configuration of package tools may hold (an index URL
# with a user and token, an `_authToken`, a registry's auth file, apt's): /etc and
# /usr are shown whole, so each is hidden behind /dev/null
SYSTEM_SECRETS = tuple(
    Path(p)
    for p in (
        "/etc/shadow",
        "/etc/shadow-",
        "/etc/gshadow",
        "/etc/gshadow-",
        "/etc/security/opasswd",
        "/etc/pip.conf",
        "/etc/xdg/pip/pip.conf",
        "/etc/npmrc",
        "/usr/local/etc/npmrc",
        "/usr/etc/npmrc",
        "/etc/apt/auth.conf",
        "/etc/containers/auth.json",
        "/etc/uv/uv.toml",
        "/etc/netrc",
    )
)
# folders of such logins, each file in them hidden the same way
SYSTEM_SECRET_FOLDERS = (Path("/etc/apt/auth.conf.d"),)
# folders and files a variable names instead of HOME's default place (gh's, git's, the
# clouds'): hidden wherever the variable points
SECRET_PLACES_ENV = (
    "GH_CONFIG_DIR",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CLOUDSDK_CONFIG",
    "AZURE_CONFIG_DIR",
    "KUBECONFIG",
    "DOCKER_CONFIG",
    "NPM_CONFIG_USERCONFIG",
    "PIP_CONFIG_FILE",
    "NETRC",
    "PGPASSFILE",
    "HISTFILE",
    "PASSWORD_STORE_DIR",
    "GNUPGHOME",
    "RCLONE_CONFIG",
    "S3CMD_CONFIG",
    "BOTO_CONFIG",
    "POETRY_CONFIG_DIR",
    "HELM_CONFIG_HOME",
    "HELM_REGISTRY_CONFIG",
    "OP_CONFIG_DIR",
    "VAULT_CONFIG_PATH",
    "TF_CLI_CONFIG_FILE",
)
# the files a variable's folder holds in place of HOME's (cargo's and gradle's logins;
# the rest of those folders, the caches and registries, a build needs)
SECRET_FILES_ENV = {
    "CARGO_HOME": ("credentials", "credentials.toml", "config", "config.toml"),
    "GRADLE_USER_HOME": ("gradle.properties",),
}
# what lies under XDG_CONFIG_HOME when it is not HOME/.config
XDG_SECRETS = (
    "gh",
    "git",
    "hub",
    "relay",
    "gcloud",
    "containers/auth.json",
    "github-copilot",
    "pip/pip.conf",
    "pypoetry/auth.toml",
    "rclone",
    "configstore",
    "op",
    "helm",
    "composer/auth.json",
    "doctl",
    "opencode",
)
# what lies under XDG_DATA_HOME when it is not HOME/.local/share
XDG_DATA_SECRETS = ("keyrings", "python_keyring", "opencode", "fish/fish_history")
# what an agent CLI keeps of its own in HOME (its login, settings, hooks, standing
# instructions, sessions): hidden in every box, whatever the role
AGENT_HOMES = (
    ".claude",
    ".claude.json",
    ".codex",
    ".gemini",
    ".aider.conf.yml",
    ".config/claude",
    ".config/github-copilot",  # Copilot's login: a GitHub token (gho_) that can push
    ".config/opencode",
    ".local/share/opencode",
)
# the folders a variable names instead of HOME's (hidden too; an agent role's copy of its
# own is pointed at by the same variable)
AGENT_DIR_ENV = {".claude": "CLAUDE_CONFIG_DIR", ".codex": "CODEX_HOME"}
# what each agent CLI needs of them to log in: copied into its role's scratch HOME (never
# the real folder, which a role could plant a hook or an "always approve" in)
AGENT_LOGINS = {
    "claude": (".claude/.credentials.json", ".claude/settings.json", ".claude.json"),
    "codex": (".codex/auth.json", ".codex/config.toml"),
    "gemini": (".gemini/oauth_creds.json", ".gemini/google_accounts.json", ".gemini/settings.json"),
    "aider": (".aider.conf.yml",),
}
AGENT_LOGIN_CAP = 16 * 1024 * 1024
# the machine's shared temporary folders: each box has its own (the one holding relay's
# box folders is the box's scratch folder, the others an empty tmpfs)
SHARED_TEMP = ("/tmp", "/var/tmp", "/dev/shm")
# folders the person shares with every box, writable, at their own path (a maker's logs,
# a cache): ``os.pathsep``-separated; nothing else outside the box is writable
SHARE_ENV = "RELAY_SANDBOX_SHARE"
# of those, the ones what judges a candidate (its gates, acceptance and metric) sees too:
# every other share is behind an empty folder there, since every maker's box writes it
JUDGED_SHARE_ENV = "RELAY_SANDBOX_SHARE_JUDGES"
# a box's bounds, so that no box takes the machine down. A relay run as root gives each
# box's user (one of its own) RLIMIT_NPROC: a fork bomb stops there, while a real build
# never nears it (it counts threads too: make -j64 with a compiler's driver, cc1 and as
# per job is some 300, pytest-xdist two per worker, a JVM or rustc build a few hundred
# threads); the host's own limit is tens of thousands. A relay not run as root sets
# none: its boxes are the person's own user, whose every process the limit counts.
PROCS_ENV = "RELAY_BOX_PROCS"
BOX_PROCS = 4096
# every writable tmpfs a box gets (its /dev/shm, /var/tmp and the emptied real HOME) is
# bounded, each by itself: a share of RAM (tmpfs's own `size=` syntax: a percentage, or
# bytes with k, m or g), and a count of files (each costs kernel memory outside `size=`)
TMPFS_ENV = "RELAY_BOX_TMPFS"
BOX_TMPFS = "10%"
TMPFS_INODES = 262144
_TMPFS_SIZE = re.compile(r"[1-9][0-9]*[kmg]?|[1-9][0-9]?%|100%")


def box_procs() -> int:
    """The processes (and threads) a root relay's box may have at once: :data:`BOX_PROCS`
    or :data:`PROCS_ENV`'s; a value that is not a count is refused in one line."""
    given = os.environ.get(PROCS_ENV, "").strip()
    if not given:
        return BOX_PROCS
    if not given.isdigit() or int(given) < 16:
        raise LocalUsageError(
            f"{PROCS_ENV}={given!r} is not a count of processes of 16 or more"
            f" (the default is {BOX_PROCS}): set it to a whole number such as 8192"
        )
    return int(given)


def bounds_said() -> list[Bound]:
    """The boxes' bounds and the candidate's, as BOARD.md lists them."""
    from relay.edges.worktree import (
        CANDIDATE_TOTAL_CAP,
        TOTAL_CAP_ENV,
        byte_bound,
        file_cap,
        shown_size,
    )

    boxed = level() == NAMESPACES
    total = byte_bound(TOTAL_CAP_ENV, CANDIDATE_TOTAL_CAP)
    return box_bounds(
        boxed=boxed,
        as_root=boxed and _as_root(),
        procs=box_procs(),
        tmpfs=box_tmpfs(),
        inodes=TMPFS_INODES,
        file_cap=shown_size(file_cap()),
        total_cap=shown_size(total),
    )


def box_tmpfs() -> str:
    """The ``size=`` of each writable tmpfs of a box: :data:`BOX_TMPFS` or
    :data:`TMPFS_ENV`'s; a value tmpfs would not take is refused in one line."""
    given = os.environ.get(TMPFS_ENV, "").strip().lower()
    if not given:
        return BOX_TMPFS
    if not _TMPFS_SIZE.fullmatch(given):
        raise LocalUsageError(
            f"{TMPFS_ENV}={given!r} is not a tmpfs size: give a share of RAM such as 25% or"
            f" a size such as 2g or 512m (the default is {BOX_TMPFS})"
        )
    return given


# the box's set-up, run by relay's own interpreter (-I -S: no site, nothing of the
# environment's): its mounts made by mount(2) itself, in one process, in the order a
# box needs them (outer folders first, a mount point made inside a tmpfs before it is
# bound, read-only once bound); then the command, as the caller, in a user namespace
# (for relay run as root: a user namespace whose root is the box's own user outside, the
# box folder given to it, what is shown bound as it is, with its owners and modes, and
# what is shared through an idmapped mount on which BOX_ID's files are that user's)
_ENTER = r"""
import _ctypes  # the C module: ctypes's package makes every C type it names at import
import _signal  # the C module: the signal module's enums cost an import of enum
import os
import stat
import struct
import sys

# the flags mount(8) passes for the options it is given (linux/mount.h)
RDONLY, NOSUID, NODEV, NOEXEC, REMOUNT, BIND, REC = 1, 2, 4, 8, 32, 4096, 16384
KEPT = {"nosuid": 2, "nodev": 4, "noexec": 8, "noatime": 1024, "nodiratime": 2048,
        "relatime": 1 << 21, "strictatime": 1 << 24}
STATVFS = {os.ST_NOSUID: 2, os.ST_NODEV: 4, os.ST_NOEXEC: 8, os.ST_NOATIME: 1024,
           os.ST_NODIRATIME: 2048, os.ST_RELATIME: 1 << 21}
# what no box may do (seccomp), on the machines whose numbers are known here: make a file
# set-user-ID or set-group-ID (chmod, fchmod, fchmodat, fchmodat2, mknod, mknodat by their
# mode; creat, open, openat by their mode when they create), nor give others write access
# to a file by chmod (a file made passes the umask, which keeps that bit: see main), nor
# open by openat2 or io_uring, whose modes a filter cannot see
# (each: number, the argument of its mode, the argument of its flags or None, bits refused)
SETID, CHMODED = 0o6000, 0o6002
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
MODED = {
    "x86_64": [(90, 1, None, CHMODED), (91, 1, None, CHMODED), (268, 2, None, CHMODED),
               (452, 2, None, CHMODED), (133, 1, None, SETID), (259, 2, None, SETID),
               (85, 1, None, SETID), (2, 2, 1, SETID), (257, 3, 2, SETID)],
    "aarch64": [(52, 1, None, CHMODED), (53, 2, None, CHMODED), (452, 2, None, CHMODED),
                (33, 2, None, SETID), (56, 3, 2, SETID)],
}
# openat2, io_uring_setup, clone3 (whose flags lie in memory: libc makes the thread or
# process by clone instead): ENOSYS, on both
UNSEEN = (437, 425, 435)
KEYED = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}  # add_key, request_key, keyctl
# nor a namespace of its own (a user namespace's root mounts in a mount namespace of its
# own, over what the box hid): clone and unshare with a namespace's flag (CLONE_NEWNS,
# NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET; unshare's NEWTIME too), EPERM
NEW_NS = 0x7E020000
FLAGGED = {"x86_64": ((56, NEW_NS), (272, NEW_NS | 0x80)),
           "aarch64": ((220, NEW_NS), (97, NEW_NS | 0x80))}
# nor mount, unmount, join a namespace or change its root: mount, umount2, pivot_root,
# setns; and open_tree, move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr,
# open_tree_attr (the same on both), EPERM
MOUNTING = {"x86_64": (165, 166, 155, 308), "aarch64": (40, 39, 41, 268)}
NEW_MOUNT = (428, 429, 430, 431, 432, 433, 442, 467)
# nor set an extended attribute: an access list's entry for others is their mode bits by
# another name, and a folder's default list passes over the umask (setxattr, lsetxattr,
# fsetxattr, setxattrat): EOPNOTSUPP, as a file system without them answers (cp, install
# and shutil then set the mode alone)
XATTRED = {"x86_64": (188, 189, 190, 463), "aarch64": (5, 6, 7, 463)}
# keyctl(2)'s number on each machine Linux runs relay on
KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219, "loongarch64": 219, "ppc64le": 353,
          "s390x": 280, "armv7l": 311, "i686": 288}


class _Int(_ctypes._SimpleCData):
    _type_ = "i"


class _Function(_ctypes.CFuncPtr):  # a function of libc's, as ctypes.CDLL's use_errno makes it
    _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
    _restype_ = _Int


class ctypes:  # what the set-up uses of ctypes, from its C module alone (as ctypes makes them)
    get_errno = staticmethod(_ctypes.get_errno)
    addressof = staticmethod(_ctypes.addressof)

    class c_long(_ctypes._SimpleCData):
        _type_ = "l"

    class c_char_p(_ctypes._SimpleCData):
        _type_ = "z"

    class c_char(_ctypes._SimpleCData):
        _type_ = "c"

    @staticmethod
    def create_string_buffer(init, size=None):
        buf = (ctypes.c_char * (len(init) + 1 if size is None else size))()
        buf.value = init
        return buf

    class CDLL:  # the program's own symbols (name None), as ctypes.CDLL(None) opens them
        def __init__(self, name):
            self._handle = _ctypes.dlopen(name, _ctypes.RTLD_LOCAL)

        def __getattr__(self, name):
            return _Function((name, self))


libc = ctypes.CDLL(None)
env = os.environ
DROP = int(env.get("RELAY_DROP") or 0)  # relay is root: the boxes' shared user and group
# the pid outside of the process the box lives under (unique while it runs): the box's user
# is then one of its own, RELAY_USERS - OUTER, whenever every share it writes can be bound
# through an idmapped mount on which the shared user's files are that user's
OUTER = int(env.get("RELAY_OUTER") or 0)
USER = DROP  # who the box's command is outside, once set up
# each writable tmpfs's bound (see BOX_TMPFS): a write past it is ENOSPC, in the box alone
BOUND = f"size={env.get('RELAY_TMPFS') or '10%'},nr_inodes={env.get('RELAY_INODES') or 262144}"
MOUNT_ATTR = {"rdonly": 1, "nosuid": 2, "nodev": 4, "idmap": 0x100000}
OPEN_TREE, MOUNT_SETATTR, MOVE_MOUNT = 428, 442, 429  # the same on every machine Linux has
UNMAPPED = ""  # why the last idmapping could not be made (relay doctor says it)


class Failed(Exception):
    pass


def path(p):
    return None if p is None else os.fsencode(p)


def mount(source, target, kind=None, flags=0, data=None):
    if libc.mount(path(source), path(target), path(kind), flags, path(data)) != 0:
        err = ctypes.get_errno()
        raise Failed(f"mount {source} on {target}: {os.strerror(err)}")


def ro(at, words=None):
    # a read-only bind of at over itself, keeping the flags a user namespace locks
    keep = 0
    if words is None:
        try:
            got = os.statvfs(at).f_flag
        except OSError:
            got = 0
        for bit, flag in STATVFS.items():
            keep |= flag if got & bit else 0
    else:
        for word in words.split(","):
            keep |= KEPT.get(word, 0)
    mount(None, at, None, REMOUNT | BIND | RDONLY | keep)


def rbind(source, target):
    mount(source, target, None, BIND | REC)


def mounted():
    # each mount's place and options, as /proc/self/mountinfo has them now
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as info:
        rows = [row.split(" ")[4:6] for row in info.read().splitlines()]
    return [(unescape(at), words) for at, words in rows]


def sealed(at, words):
    # a share's mount again as it was (read-only too, where it was), but nosuid and nodev:
    # nothing set-user-ID runs from it, and no device node there opens
    keep = NOSUID | NODEV
    for word in words.split(","):
        keep |= KEPT.get(word, 0) | (RDONLY if word == "ro" else 0)
    mount(None, at, None, REMOUNT | BIND | keep)


def lines(name):
    return [p for p in env.get(name, "").split("\n") if p]


def under(at, folder):
    return at == folder or at.startswith(folder + "/")


def unescape(at):
    if "\\" not in at:
        return at
    raw = os.fsencode(at)
    out = bytearray()
    i = 0
    while i < len(raw):
        if raw[i] == 92 and raw[i + 1:i + 4].isdigit() and len(raw[i + 1:i + 4]) == 3:
            out.append(int(raw[i + 1:i + 4], 8) & 255)
            i += 4
        else:
            out.append(raw[i])
            i += 1
    return os.fsdecode(bytes(out))


def sockets(folder):
    # every socket under folder (links not followed) behind /dev/null: those that stay
    left = []
    todo = [folder]
    while todo:
        try:
            entries = list(os.scandir(todo.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                todo.append(entry.path)
            elif stat.S_ISSOCK(mode):
                try:
                    mount("/dev/null", entry.path, None, BIND)
                except Failed:
                    left.append(entry.path)
    return left


def inside(box, rel):
    # box/rel as a real folder, made where missing, never through a link: the box folder
    # is read-only inside a box, but a link found where the set-up binds (mount(2) follows
    # links) is refused all the same
    at = box
    for part in [p for p in rel.split("/") if p]:
        at = at + "/" + part
        try:
            os.mkdir(at, 0o700)
        except FileExistsError:
            pass
        if not stat.S_ISDIR(os.lstat(at).st_mode):
            raise Failed(f"{at} is not a folder of relay's (a link or a file put there)")
    return at


def give(top, uid, gid):
    # top and what it holds to uid:gid, through no link (by descriptor, a link itself
    # left as it is), but a file with another hard link (it could be a host file's) and,
    # in a judged box, a file of relay's own: the candidate's files as relay checked them
    # out, which its code reads and never writes (and whose change time then moves only
    # when something writes, renames or replaces them)
    tree = env.get("RELAY_JUDGED")
    for at, _, files, fd in os.fwalk(top, follow_symlinks=False):
        keep = tree is not None and under(at, tree)
        if not (keep and os.fstat(fd).st_uid == 0):  # (relay's folders there: see judged)
            os.chown(fd, uid, gid)
        for name in files:
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if st.st_nlink == 1 and not (keep and st.st_uid == 0):
                    os.chown(name, uid, gid, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                pass


def made(d):
    # d made where missing; in the box's /tmp each folder made is the box's user's, who
    # writes beside what it is shown there, as in a /tmp of its own; elsewhere (an emptied
    # folder's) one the box's user passes through, whatever relay's umask
    missing = []
    at = d
    while at not in ("", "/") and not os.path.lexists(at):
        missing.append(at)
        at = os.path.dirname(at)
    os.makedirs(d, exist_ok=True)
    if DROP:
        for each in missing:
            if under(each, env["RELAY_TEMP"]):
                os.chown(each, USER, DROP, follow_symlinks=False)
            else:
                os.chmod(each, 0o755, follow_symlinks=False)


def idmap_of(uid):
    # a user namespace (its descriptor) that maps every id to itself but DROP, which is
    # uid (and uid, which is no one): an idmapped mount through it stores uid's files as
    # DROP's on disk and shows DROP's as uid's; the rest as they are, so that a file of
    # no mapped owner is never refused a write its bits allow
    ready, go = os.pipe(), os.pipe()
    pid = os.fork()
    if pid == 0:
        ok = libc.unshare(0x10000000) == 0  # CLONE_NEWUSER
        os.write(ready[1], b"1" if ok else b"0")
        os.read(go[0], 1)
        os._exit(0)
    try:
        if os.read(ready[0], 1) != b"1":
            raise OSError(ctypes.get_errno(), "cannot make an idmapping")
        top = 4294967295
        rows = (f"0 0 {uid}\n{uid + 1} {uid + 1} {DROP - uid - 1}\n{DROP} {uid} 1\n"
                f"{DROP + 1} {DROP + 1} {top - DROP - 1}\n")
        with open(f"/proc/{pid}/uid_map", "w") as table:
            table.write(rows)
        with open(f"/proc/{pid}/gid_map", "w") as table:
            table.write(f"0 0 {top}\n")
        return os.open(f"/proc/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.write(go[1], b"1")
        os.waitpid(pid, 0)
        for fd in (*ready, *go):
            os.close(fd)


def idmapped(folders, uid):
    # each folder as a detached copy of its mounts (held by a descriptor, moved to its place
    # later), nosuid and nodev, through idmap_of(uid); None where one cannot be (a file
    # system with no idmapping, an older kernel): the box then runs as DROP
    global UNMAPPED
    held = {}
    try:
        userns = idmap_of(uid)
    except OSError as err:
        UNMAPPED = str(err)
        return None
    try:
        attr = ctypes.create_string_buffer(struct.pack(
            "QQQQ", MOUNT_ATTR["idmap"] | MOUNT_ATTR["nosuid"] | MOUNT_ATTR["nodev"], 0, 0, userns
        ))
        for f in folders:
            # OPEN_TREE_CLONE | AT_RECURSIVE | O_CLOEXEC; then AT_EMPTY_PATH | AT_RECURSIVE
            fd = libc.syscall(OPEN_TREE, -100, path(f), 1 | 0x8000 | 0o2000000)
            if fd < 0:
                raise OSError(ctypes.get_errno(), f"open_tree {f}")
            held[f] = fd
            if libc.syscall(MOUNT_SETATTR, fd, b"", 0x1000 | 0x8000, attr, 32) != 0:
                raise OSError(ctypes.get_errno(), f"idmap {f}")
    except OSError as err:
        UNMAPPED = str(err)
        for fd in held.values():
            os.close(fd)
        return None
    finally:
        os.close(userns)
    return held


def moved(fd, target):
    # a detached mount (idmapped) moved to target: MOVE_MOUNT_F_EMPTY_PATH
    if libc.syscall(MOVE_MOUNT, fd, b"", -100, path(target), 4) != 0:
        raise Failed(f"mount on {target}: {os.strerror(ctypes.get_errno())}")
    os.close(fd)


def is_socket(p):
    try:
        return stat.S_ISSOCK(os.stat(p).st_mode)
    except OSError:
        return False


def setup():
    box = env["RELAY_BOX"]
    if not stat.S_ISDIR(os.lstat(box).st_mode):
        raise Failed(f"{box} is not a folder of relay's")
    global USER
    shares, shown = lines("RELAY_SHARES"), lines("RELAY_SHOWN")
    person = [s for s in shares if s not in shown]
    held = {}
    for s in person:  # cleared of what a box's user left open to others (_CLEAR): the boxes'
        try:  # user's, or (a relay not run as root) the person's, root here
            strip(s, DROP or 0, bool(DROP))
        except OSError as err:
            raise Failed(f"cannot clear a share of what a box left open: {err}") from None
    if DROP:
        if OUTER:  # a user of the box's own where every share it writes can be idmapped
            held = idmapped(person, int(env["RELAY_USERS"]) - OUTER)
            if held is not None:
                USER = int(env["RELAY_USERS"]) - OUTER
            held = held or {}
    through = set(held)
    for rel in lines("RELAY_OWN"):  # what the box writes: each a mount of its own, writable
        at = inside(box, rel)  # in the box folder bound read-only below
        rbind(at, at)
    if DROP:  # run as root: the box folder is its unprivileged user's
        inside(box, f"tmp/{env['RELAY_BOX_IN']}")  # (with the way to it in its /tmp)
        give(box, USER, DROP)
    if env.get("RELAY_DEV"):  # a /dev of its own: no disk, console, loop device or kvm
        d = box + "/dev"
        os.mkdir(d)
        mount("relay-dev", d, "tmpfs", NOSUID | NOEXEC, "mode=0755,size=64k")
        for n in ("null", "zero", "full", "random", "urandom", "tty"):
            if os.path.exists("/dev/" + n):
                os.close(os.open(f"{d}/{n}", os.O_WRONLY | os.O_CREAT, 0o644))
                mount("/dev/" + n, f"{d}/{n}", None, BIND)
        os.mkdir(d + "/pts")
        os.mkdir(d + "/shm")
        try:
            mount("relay-pts", d + "/pts", "devpts", 0, "newinstance,ptmxmode=0666,mode=0620")
        except Failed:
            pass
        mount("relay-shm", d + "/shm", "tmpfs", NOSUID | NODEV, "mode=1777," + BOUND)
        os.symlink("pts/ptmx", d + "/ptmx")
        os.symlink("/proc/self/fd", d + "/fd")
        os.symlink("/proc/self/fd/0", d + "/stdin")
        os.symlink("/proc/self/fd/1", d + "/stdout")
        os.symlink("/proc/self/fd/2", d + "/stderr")
        rbind(d, "/dev")
        if libc.umount2(path(d), 2) != 0:  # MNT_DETACH
            raise Failed(f"umount {d}: {os.strerror(ctypes.get_errno())}")
        os.rmdir(d)
    tree, show_at = env.get("RELAY_TREE", ""), env.get("RELAY_SHOW_AT", "")
    for n in lines("RELAY_SHOW_DIRS"):  # the person's environments, read-only, in relay's clone
        rbind(f"{show_at}/{n}", f"{tree}/{n}")
        ro(f"{tree}/{n}")
    for i, s in enumerate(shares, 1):  # the person's shares, past the private temporary folder
        if s not in held:  # (an idmapped one is held by its descriptor meanwhile)
            rbind(s, inside(box, f"shared/{i}"))
    # a private temporary folder: the box's scratch, with the box's own folder at its own path
    temp = env["RELAY_TEMP"]
    own = inside(box, f"tmp/{env['RELAY_BOX_IN']}")
    rbind(box, own)
    ro(own)  # the box folder itself: no entry made, renamed or replaced there
    rbind(inside(box, "tmp"), temp)
    # the real HOME and every folder at the top of / but the system's and the software's,
    # empty (what a role runs from is shown below): no socket bound there, now or later
    homes = lines("RELAY_HOMES")
    here = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    for h in homes:
        os.chdir(temp)  # held while its folder is covered: a temporary folder in it comes back
        os.makedirs(h, exist_ok=True)
        mount("relay-empty", h, "tmpfs", NOSUID | NODEV, "mode=0755," + BOUND)
        if (temp + "/").startswith(h + "/"):
            os.makedirs(temp, exist_ok=True)
            rbind(".", temp)
        os.fchdir(here)
    # an emptied top folder's own links, as they were
    links = env.get("RELAY_LINKS", "").split("\n")
    for at, to in zip(links[0::2], links[1::2]):
        try:
            os.symlink(to, at)
        except OSError:
            pass
    for d in lines("RELAY_PRIVATE"):  # the other shared temporary folders: the box's own, empty
        os.makedirs(d, exist_ok=True)
        mount("relay-tmp", d, "tmpfs", 0, "mode=1777," + BOUND)
    for i, s in enumerate(shares, 1):  # each as it is, owners and modes: for relay run as
        # root, root's files are no one's in the box (only their bits for others hold), and
        # what it writes in a share is its user's on disk, never root's
        made(s)
        if s in held:  # through its idmapping: already nosuid and nodev, what it holds too
            moved(held.pop(s), s)
            continue
        rbind(f"{box}/shared/{i}", s)
        if s in shown:  # relay's own, read-only
            ro(s)
        else:  # the person's: nosuid and nodev, what it holds mounted too (before a
            # socket or login there is hidden behind /dev/null, which must open)
            for at, words in mounted():
                if under(at, s) and os.path.exists(at):
                    sealed(at, words)
    for i, s in enumerate(shares, 1):  # the staging binds go: a share is at its place alone
        staged = f"{box}/shared/{i}"
        if s in through:
            continue
        if libc.umount2(path(staged), 2) != 0:  # MNT_DETACH
            raise Failed(f"umount {staged}: {os.strerror(ctypes.get_errno())}")
    for d in lines("RELAY_HIDE_DIRS"):
        if os.path.isdir(d):
            mount("relay-hidden", d, "tmpfs", RDONLY, "size=16k,mode=0500")
    for d in lines("RELAY_EMPTY_SHARES"):  # a share it does not see: an empty folder of its
        try:  # own, writable (a tool's cache there works), gone with the box
            made(d)
        except OSError:
            continue
        mount("relay-empty-share", d, "tmpfs", NOSUID | NODEV, "mode=0700," + BOUND)
        if DROP:
            os.chown(d, USER, DROP)
    for f in lines("RELAY_HIDE_FILES"):
        if os.path.exists(f):
            mount("/dev/null", f, None, BIND)
    for d in lines("RELAY_SOCKET_DIRS"):  # the machine's sockets (docker's, systemd's, databases')
        left = sockets(d)
        if left:
            raise Failed(f"cannot hide the socket {left[0]}")
    for s in lines("RELAY_SOCKETS"):  # every other socket the machine has bound in a folder
        if is_socket(s):
            try:
                mount("/dev/null", s, None, BIND)
            except Failed:
                if is_socket(s):
                    raise Failed(f"cannot hide the socket {s}") from None
    for d in lines("RELAY_RO_DIRS"):
        rbind(d, d)
        ro(d)
    if env.get("RELAY_LOOPBACK"):  # the box's own loopback up
        try:
            import _socket  # the C module, as for signals: no enum imported
            import fcntl

            s = _socket.socket()
            try:
                asked = struct.pack("16sH14s", b"lo", 0, b"")
                f = struct.unpack("16sH", fcntl.ioctl(s, 0x8913, asked)[:18])[1]
                fcntl.ioctl(s, 0x8914, struct.pack("16sH14s", b"lo", f | 1, b""))
            finally:
                s.close()
        except OSError:
            pass
    cwd = os.getcwd()
    if show_at:  # relay's clone at the person's clone's path
        made(show_at)
        rbind(tree, show_at)
        if under(cwd, tree):
            cwd = show_at + cwd[len(tree):]
    for p in ("/proc/sys", "/proc/sysrq-trigger"):  # the kernel's settings
        if os.path.exists(p):
            mount(p, p, None, BIND)
            ro(p)
    for p in ("/proc/keys", "/proc/key-users"):  # the keys its user may view: the person's
        if os.path.exists(p):  # names of keys (a login's, a mount's), for a relay not root
            mount("/dev/null", p, None, BIND)
    # everything else read-only: the person's folders, the clone's parents, the system's
    writable = lines("RELAY_WRITABLE")
    for at, words in mounted():
        if under(at, "/proc") or under(at, "/dev"):
            continue
        if any(under(at, w) for w in writable) or not os.path.exists(at):
            continue
        if any(at.startswith(e + "/") for e in homes):  # covered by an emptied folder
            try:
                ro(at, words)
            except Failed:
                pass
        else:
            ro(at, words)
    return cwd


def no_special_modes(machine):
    # the classic BPF program for the tables above, loaded with PR_SET_SECCOMP: another
    # architecture's calls (i386's, x32's) fail with ENOSYS, the calls above as they say
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, eperm, enosys, unsupported = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38, 0x00050000 | 95
    arg = lambda i: 16 + 8 * i  # the low half of args[i] (little-endian machines alone)
    prog = [(ld, 0, 0, 4), (jeq, 1, 0, AUDIT_ARCH[machine]), (ret, 0, 0, enosys), (ld, 0, 0, 0)]
    prog += [(jge, 0, 1, 0x40000000), (ret, 0, 0, enosys)]
    refused = [(nr, enosys) for nr in UNSEEN]
    refused += [(nr, eperm) for nr in (*KEYED[machine], *MOUNTING[machine], *NEW_MOUNT)]
    refused += [(nr, unsupported) for nr in XATTRED[machine]]
    for nr, answer in refused:
        prog += [(ld, 0, 0, 0), (jeq, 0, 1, nr), (ret, 0, 0, answer)]
    for nr, bits in FLAGGED[machine]:  # its first argument's flags
        rest = [(ld, 0, 0, arg(0)), (jset, 0, 1, bits), (ret, 0, 0, eperm), (ret, 0, 0, allow)]
        prog += [(ld, 0, 0, 0), (jeq, 0, len(rest), nr), *rest]
    for nr, mode, flags, bits in MODED[machine]:
        rest = []
        if flags is not None:  # O_CREAT or O_TMPFILE's own bit, or allowed
            rest += [(ld, 0, 0, arg(flags)), (jset, 0, 3, 0o100 | 0o20000000)]
        rest += [(ld, 0, 0, arg(mode)), (jset, 0, 1, bits)]
        rest += [(ret, 0, 0, eperm), (ret, 0, 0, allow)]
        prog += [(ld, 0, 0, 0), (jeq, 0, len(rest), nr), *rest]
    prog.append((ret, 0, 0, allow))
    code = b"".join(struct.pack("HBBI", *each) for each in prog)
    filt = ctypes.create_string_buffer(code, len(code))
    fprog = struct.pack("HxxxxxxQ", len(prog), ctypes.addressof(filt))
    if libc.prctl(22, 2, ctypes.c_char_p(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, MODE_FILTER
        raise OSError(ctypes.get_errno(), "seccomp")


def own_user(uid, gid):
    # the command's user namespace, made here before the filter refuses one: uid and gid in
    # it are who this process is outside it (as unshare --map-user, --map-group make it);
    # its tables are written by this process, which a set-user-ID change made undumpable
    # (its /proc files then root's): dumpable again, as any program is from its execve on
    outer_uid, outer_gid = os.geteuid(), os.getegid()
    if libc.prctl(4, 1, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
        raise OSError(ctypes.get_errno(), "dumpable")
    if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
        raise OSError(ctypes.get_errno(), "user namespace")
    rows = {"setgroups": "deny", "uid_map": f"{uid} {outer_uid} 1",
            "gid_map": f"{gid} {outer_gid} 1"}
    for name, row in rows.items():
        with open(f"/proc/self/{name}", "w") as table:
            table.write(row)


def named(key):
    return (key[:1].isalpha() or key[:1] == b"_") and key.replace(b"_", b"a").isalnum()


def main():
    uid, gid, command = sys.argv[1:4]
    try:
        cwd = setup()
    except (Failed, OSError) as err:
        sys.stderr.write(f"relay: cannot set up the box: {err}\n")
        sys.exit(1)
    # the environment as it was given (the interpreter's own changes left out)
    with open("/proc/self/environ", "rb") as given:
        pairs = [e.partition(b"=") for e in given.read().split(b"\0") if e]
    drop = {b"RELAY_" + n.encode() for n in (
        "HIDE_DIRS HIDE_FILES RO_DIRS LOOPBACK WRITABLE SHOW_DIRS SHOW_AT TREE SHARES PRIVATE "
        "TEMP BOX BOX_IN SHOWN SOCKET_DIRS DEV HOMES SOCKETS LINKS OWN DROP OUTER USERS "
        "EMPTY_SHARES JUDGED PROCS TMPFS INODES"
    ).split()}
    # (a name a shell cannot hold is dropped, as the shell that ran the set-up dropped it)
    out = {k: v for k, _, v in pairs if k not in drop and named(k)}
    os.chdir("/")
    os.chdir(cwd)  # the folder as the mounts made it
    out[b"OLDPWD"], out[b"PWD"] = b"/", os.fsencode(cwd)
    for each in (_signal.SIGPIPE, _signal.SIGXFSZ):  # as the command expects them
        _signal.signal(each, _signal.SIG_DFL)
    try:
        if DROP:  # relay is root: the command's user namespace is made as the box's own user,
            # its processes bounded while root may still set the bound: the box's user is
            # its own, so the count is this box's alone (a fork bomb stops in it)
            procs = int(env.get("RELAY_PROCS") or 0)
            if procs:
                import resource

                resource.setrlimit(resource.RLIMIT_NPROC, (procs, procs))
            os.setgroups([])  # with no capability left here
            os.setgid(DROP)
            os.setuid(USER)
    except OSError as err:
        sys.stderr.write(f"relay: cannot set up the box: {err}\n")
        sys.exit(1)
    # a session keyring of its own (KEYCTL_JOIN_SESSION_KEYRING, no name: a new anonymous
    # one, the box's user's): the person's login keys are neither read nor added to from it
    machine = os.uname().machine
    keyctl = KEYCTL.get(machine)
    if keyctl is None or libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(1), None) < 0:
        why = os.strerror(ctypes.get_errno()) if keyctl else f"not known on {machine}"
        sys.stderr.write(f"relay: cannot set up the box: no session keyring of its own ({why})\n")
        sys.exit(1)
    try:
        # no way back through a set-user-ID program, and no file of the box's user's (the
        # person's own, for a relay not run as root) made set-user-ID for another local
        # account to run as that user, even while the box runs; and no key reached at all
        # (the filter refuses keyctl, add_key and request_key): a box of a relay not run as
        # root is the person's user, whose own keys it could find by serial, link and read;
        # and no namespace made nor mount changed once its user namespace is made here
        own_user(int(uid), int(gid))
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            raise OSError(ctypes.get_errno(), "no_new_privs")
        if machine in MODED:
            no_special_modes(machine)
    except OSError as err:
        sys.stderr.write(f"relay: cannot set up the box: {err}\n")
        sys.exit(1)
    # others' write bit in the umask, so that no file or folder the box makes is writable by
    # another local account (a share's, while the box runs). A process that clears it again
    # is not stopped: a filter answering umask(0) with 0 and the mask unchanged would have
    # every reader of the umask read 0, as pip reads it (umask(0), then umask(mask)), and
    # pip then chmods what it installs to 0666, which the filter refuses
    os.umask(os.umask(0) | 0o002)
    os.execve("/bin/sh", ["/bin/sh", "-c", command], out)


main()
"""


# relay run as root, before a box starts and once it is over (its pid namespace gone, so
# nothing of it runs): no file of the box's user's in a share keeps a set-user-ID or
# set-group-ID bit or a file capability, which would make any local user who runs it that
# user, the owner of every later box's folder and processes. The walk follows no link
# (each folder by descriptor, each entry opened O_PATH|O_NOFOLLOW and judged by fstat),
# changes regular files alone and prints how many entries it saw. It keeps a stack, not
# Python's recursion, so no depth a box can make stops it half-way, and a bounded number
# of folders open (see OPEN); anything it cannot walk stops the run, named.
_CLEAR = r"""
import errno
import os
import stat

SPECIAL = stat.S_ISUID | stat.S_ISGID
NOFOLLOW = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
OPEN = 64  # folders kept open at most; one above them is opened again as ".." when due


def clear(each, uid, name, root):
    # what the boxes' user (uid) left open to another local account: a set-user-ID or
    # set-group-ID bit or a file capability (a regular file's), write access for others or
    # for a group not the boxes', an access list (a file's or a folder's); an entry of any
    # other user's but root's is refused (another local account wrote there, while a box had
    # opened a folder to it). For a relay not run as root (root is the person here, in a
    # user namespace where no one else's ids are mapped) only others' write access goes.
    st = os.fstat(each)
    if root and st.st_uid not in (uid, 0):
        why = f"it holds an entry of user {st.st_uid}'s: remove it or chown it to {uid}"
        raise OSError(errno.EPERM, why, name)
    regular, folder = stat.S_ISREG(st.st_mode), stat.S_ISDIR(st.st_mode)
    if not (regular or folder) or uid not in (st.st_uid, st.st_gid):
        return
    at = f"/proc/self/fd/{each}"  # the file opened, never a name swapped since
    mode = stat.S_IMODE(st.st_mode)
    opened = 0o002 | (0o020 if root and st.st_gid != uid else 0)
    kept = mode & ~(SPECIAL if regular and root else 0) & ~(opened if st.st_uid == uid else 0)
    try:
        if kept != mode:
            os.chmod(at, kept)
        names = ["system.posix_acl_access", "system.posix_acl_default"]
        for attr in (["security.capability", *names] if regular else names) if root else []:
            try:
                os.removexattr(at, attr)
            except OSError as err:
                if err.errno not in (errno.ENODATA, errno.ENOTSUP):
                    raise
    except OSError as err:
        raise OSError(err.errno, err.strerror, name) from None


def where(top, stack):
    path = "/".join([top, *(level[2] for level in stack[1:])])
    return path if len(path) <= 200 else f"{path[:100]}...{path[-100:]} ({len(stack)} deep)"


def walk(top, uid, stack, root, links):
    # depth first with a stack, not recursion (no depth stops it half-way), each level
    # [descriptor or None, names left, its name, device, inode]; past OPEN levels the
    # highest is closed, and opened again from its child's ".." once the child is done,
    # the same folder (device and inode) or the walk stops
    low = 0
    seen = 0
    while stack:
        level = stack[-1]
        fd, names = level[0], level[1]
        if not names:
            if len(stack) > 1 and stack[-2][0] is None:
                up = os.open("..", FOLDER, dir_fd=fd)
                st = os.fstat(up)
                stack[-2][0] = up
                low -= 1
                if (st.st_dev, st.st_ino) != tuple(stack[-2][3:]):
                    raise OSError(errno.ESTALE, "moved while it was cleared", where(top, stack))
            os.close(fd)
            level[0] = None
            stack.pop()
            continue
        name = names.pop()
        seen += 1
        try:
            each = os.open(name, NOFOLLOW, dir_fd=fd)
        except FileNotFoundError:
            continue
        try:
            st = os.fstat(each)
            clear(each, uid, name, root)
            if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:  # each link found in it, or not
                seen_of = links.setdefault((st.st_dev, st.st_ino), [st.st_nlink, 0, ""])
                seen_of[1] += 1
                seen_of[2] = f"{where(top, stack)}/{name}"
            if not stat.S_ISDIR(st.st_mode):
                continue
            below = os.open(".", FOLDER, dir_fd=each)  # the folder judged, as opened
        finally:
            os.close(each)
        stack.append([below, [], name, st.st_dev, st.st_ino])
        stack[-1][1] = os.listdir(below)
        if len(stack) - low > OPEN:
            os.close(stack[low][0])
            stack[low][0] = None
            low += 1
    return seen


def strip(top, uid, root=True):
    try:
        fd = os.open(top, FOLDER)
    except (FileNotFoundError, NotADirectoryError):
        return 0  # no share there (nor a link: shares are named as resolved)
    st = os.fstat(fd)
    stack = [[fd, [], top, st.st_dev, st.st_ino]]
    try:
        clear(fd, uid, top, root)
        stack[0][1] = os.listdir(fd)
        links = {}
        seen = walk(top, uid, stack, root, links)
        for count, found, at in links.values():
            if found < count:  # a file of a virtualenv installed from a shared cache
                why = "it holds a file with a link outside it (a package cache a virtualenv"
                why += " installs from?), which a box could change through it: share no such folder"
                raise OSError(errno.EPERM, why, at)
        return seen
    except OSError as err:
        if err.filename is not None and not str(err.filename).startswith("/"):
            err = OSError(err.errno, err.strerror, f"{where(top, stack)}/{err.filename}")
        raise err
    finally:
        for level in stack:
            if level[0] is not None:
                os.close(level[0])
"""

_STRIP = (
    _CLEAR
    + r"""
import sys


def main():
    uid = int(sys.argv[1])
    seen = 0
    try:
        for top in sys.argv[2:]:
            seen += strip(top, uid)
    except OSError as err:
        sys.stderr.write(f"relay: cannot clear a share of what a box left open: {err}\n")
        sys.exit(1)
    if os.environ.get("RELAY_STRIP_COUNT"):
        sys.stderr.write(f"relay: {seen} entries seen in the shares\n")


main()
"""
)


# the machines whose boxes the set-up's seccomp filter holds (MODED's in _ENTER)
FILTERED = frozenset({"x86_64", "aarch64"})


def strip_command(shares: Sequence[Path]) -> str:
    """The shell command that clears, in ``shares``, what a box's user left set-user-ID,
    set-group-ID or with a file capability (:data:`_STRIP`), run by relay's interpreter."""
    argv = [sys.executable, "-I", "-S", "-c", _STRIP, str(BOX_ID), *map(str, shares)]
    return " ".join(shlex.quote(a) for a in argv)


# RELAY_SANDBOX=env makes relay act as where namespaces cannot be made (for tests and to
# diagnose the env-level-only path on a machine that has them); it never raises the level
FORCE_ENV = "RELAY_SANDBOX"


def level() -> str:
    """How far the maker's boundary goes on this machine: NAMESPACES when an unprivileged
    user and mount namespace can be made and a folder hidden in it, else ENV_ONLY (and
    ENV_ONLY whenever RELAY_SANDBOX=env)."""
    if os.environ.get(FORCE_ENV, "").strip().lower() == "env":
        return ENV_ONLY
    return _probe()


# what the probe's verdict rests on besides relay's own code: the boot, the kernel's
# settings for unprivileged namespaces, and what a box shows of this process's environment
PROBED_ON = (
    "/proc/sys/kernel/random/boot_id",
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/user/max_mnt_namespaces",
    "/proc/sys/user/max_pid_namespaces",
    "/proc/sys/user/max_net_namespaces",
)
PROBED_ENV = ("HOME", "PATH", "TMPDIR", SHARE_ENV, "XDG_RUNTIME_DIR")
PROBE_FILE = "sandbox-level"  # in relay's cache folder: the keys NAMESPACES verdicts held for
PROBES_KEPT = 8  # a person's shell and a scheduler's entry probe with environments of their own


def _probe_key() -> str | None:
    """What a probe's verdict holds for (None where the boot cannot be told apart): a new
    boot, a kernel setting changed, another box script or environment probes again."""
    import hashlib

    facts = [str(os.getuid()), sys.executable, shutil.which("unshare") or "", _ENTER]
    facts += [f"{name}={os.environ.get(name, '')}" for name in PROBED_ENV]
    for name in PROBED_ON:
        try:
            facts.append(Path(name).read_text(encoding="utf-8").strip())
        except OSError:
            if name == PROBED_ON[0]:
                return None
            facts.append("-")
    return hashlib.sha256("\0".join(facts).encode("utf-8", "surrogateescape")).hexdigest()


def _probe_file() -> Path:
    import platformdirs

    return platformdirs.user_cache_path("relay", appauthor=False) / PROBE_FILE


@functools.cache
def _probe() -> str:
    """Whether the namespaces hold here: tried once a boot (it starts a box's worth of
    processes), a verdict of NAMESPACES kept in relay's cache folder for the same boot,
    kernel settings and environment. Only that verdict is kept: a kept one that no longer
    holds makes every box fail to start (never a lower boundary than said), and
    ENV_ONLY is probed again each time."""
    if os.name != "posix" or shutil.which("unshare") is None or not Path("/bin/sh").exists():
        return ENV_ONLY
    key = _probe_key()
    path = _probe_file()
    kept = read_regular(path, 65 * PROBES_KEPT).decode("ascii", "replace").split()
    if key is not None and key in kept:
        return NAMESPACES
    got = _probe_now()
    if got == NAMESPACES and key is not None:
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(
                "w", encoding="ascii", dir=path.parent, prefix=PROBE_FILE, delete=False
            ) as partial:
                partial.write("".join(f"{k}\n" for k in [*kept, key][-PROBES_KEPT:]))
            Path(partial.name).replace(path)
    return got


def _probe_now() -> str:
    """Make a box and look from inside whether a hidden file is hidden."""
    with tempfile.TemporaryDirectory(prefix="relay-probe-") as tmp:
        folder = Path(tmp) / "box"
        hide = folder / "tree" / "hidden"
        hide.mkdir(parents=True)
        (hide / "secret").write_text("x", encoding="utf-8")
        box = Sandbox(folder, folder / "tree", folder / "home", (hide,), NAMESPACES)
        tree = shlex.quote(str(box.tree))
        probe = box.wrap(f"test -d {tree} && test ! -e {shlex.quote(str(hide / 'secret'))}")
        try:
            done = subprocess.run(
                ["/bin/sh", "-c", probe], cwd=box.tree, capture_output=True, timeout=20, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return ENV_ONLY
    return NAMESPACES if done.returncode == 0 else ENV_ONLY


def _enter() -> list[str]:
    """The script that sets up the mounts, given to relay's interpreter as its command line: never
    a file, which code run in an earlier box could have swapped for a link that relay's
    write would follow onto any file of the person's."""
    return [sys.executable, "-I", "-S", "-c", _entry()]


# relay doctor's probe, after the set-up's definitions (never its main): whether each folder
# named can be bound through the idmapped mount a box's set-up makes, by the same calls
# (a detached copy, never attached, gone when its descriptor closes); a line each: "" or why
_IDMAP_PROBE = r"""
for each in sys.argv[1:]:
    UNMAPPED = ""
    held = idmapped([each], BOX_IDS_TOP - 1)
    for fd in (held or {}).values():
        os.close(fd)
    print("" if held is not None else (UNMAPPED or "cannot be idmapped").replace(chr(10), " "))
"""


def idmap_probe(shares: Sequence[Path]) -> dict[Path, str]:
    """For a relay run as root: each of ``shares`` with why a box's set-up could not bind
    it through an idmapped mount ("" where it can; where one cannot, every box that writes
    it runs as the boxes' shared user :data:`BOX_ID`). The set-up's own code, run once in
    a process of its own; each unprobed (the probe could not run) is said so."""
    if not shares:
        return {}
    code = _setup() + _IDMAP_PROBE.replace("BOX_IDS_TOP", str(USERS_TOP))
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", code, *map(str, shares)],
            env={"RELAY_DROP": str(BOX_ID)},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as err:
        return dict.fromkeys(shares, f"the probe could not run: {err}")
    said = done.stdout.split("\n")
    if done.returncode != 0 or len(said) < len(shares):
        why = (done.stderr.strip().splitlines() or ["no answer"])[-1]
        return dict.fromkeys(shares, f"the probe could not run: {why}")
    return dict(zip(shares, said, strict=False))


_USERS_SOON: list[tuple[str, Callable[[], str]]] = []  # box_users started early, by its shares


def box_users_soon() -> None:
    """Start working out :func:`box_users` in a thread of its own: its probe is a process of
    its own (tens of milliseconds) that a run's other start-up work need not wait for. The
    next :func:`box_users` takes its answer (or works it out again, the shares named since
    being others)."""
    _USERS_SOON.clear()  # one a run that stopped early started is no later run's
    said: list[str] = []
    failed: list[BaseException] = []

    def work() -> None:
        try:
            said.append(_box_users())
        except BaseException as err:  # raised where the answer is taken, as before
            failed.append(err)

    thread = threading.Thread(target=work, name="relay-box-users")
    thread.start()

    def answer() -> str:
        thread.join()
        if failed:
            raise failed[0]
        return said[0]

    _USERS_SOON.append((os.environ.get(SHARE_ENV, ""), answer))


def box_users() -> str:
    """Who a root relay's makers' boxes run as, said where they fall back to the boxes'
    shared user (a share no idmapped mount can bind, or a user namespace that does not map
    their own users); "" where each box is a user of its own, or relay is not root."""
    if _USERS_SOON:
        shares, answer = _USERS_SOON.pop()
        said = answer()
        if shares == os.environ.get(SHARE_ENV, ""):
            return said
    return _box_users()


def _box_users() -> str:
    if level() != NAMESPACES or not _as_root():
        return ""
    shares = [s for s in named_shares() if s.is_dir()]
    if not shares:
        return ""
    one = f"every box the boxes' shared user ({BOX_ID}), not a user of its own"
    if not _own_users():
        return f"{one}: this user namespace does not map the boxes' own users"
    unmapped = [f"{s} ({why})" for s, why in idmap_probe(shares).items() if why]
    if unmapped:
        return f"{one}: no idmapped mount binds {', '.join(unmapped)}"
    return ""


def _entry() -> str:
    """:data:`_ENTER` as each box runs it: its definitions (:func:`_setup`), then its main."""
    return f"{_setup()}\nmain()"


@functools.cache
def _setup() -> str:
    """:data:`_ENTER`'s definitions (all but its closing call of main), with
    :data:`_CLEAR`'s, compiled once a run, the code object on the command line (marshal's
    format is the interpreter's own, and the box runs this very interpreter): each box, and
    relay doctor's idmapping probe, then starts without compiling the set-up again
    (compressed, about as long as its text; zlib's default level, whose output is within
    1% of its best level's at a fifth of its time)."""
    import binascii
    import marshal
    import zlib

    setup = _CLEAR + _ENTER[: _ENTER.rindex("main()")]
    code = marshal.dumps(compile(setup, "<relay box set-up>", "exec"))
    packed = binascii.b2a_base64(zlib.compress(code, 6), newline=False).decode("ascii")
    return (
        "import binascii, marshal, zlib\n"
        f"exec(marshal.loads(zlib.decompress(binascii.a2b_base64({packed!r}))))"
    )


def _outer() -> list[str]:
    """The namespaces a box's set-up runs in: relay run as root makes them with no user
    namespace (one would map the box's root to the real one, who reads every 0600 file
    of the machine); its command's user namespace is :data:`BOX_ID`'s instead."""
    own = ["--mount", "--pid", "--ipc", "--uts", "--fork", "--mount-proc"]
    if _as_root():  # (its mounts reach no other namespace, the machine's least of all)
        return ["unshare", *own, "--propagation", "private"]
    return ["unshare", "--user", "--map-root-user", *own]


@functools.cache
def _as_root() -> bool:
    """Whether a box's command is :data:`BOX_ID` outside its user namespace: relay is
    root, able to make the box's namespaces with no user namespace (CAP_SYS_ADMIN), in a
    user namespace where that user and group are (a root of a container whose map holds
    no such id keeps the user namespace's root for its boxes, which is no real root)."""
    if os.name != "posix" or os.getuid() != 0:
        return False
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii", errors="replace")
        tables = [Path(f"/proc/self/{name}").read_text(encoding="ascii") for name in MAPS]
    except OSError:
        return False
    caps = next((row.split()[1] for row in status.splitlines() if row.startswith("CapEff:")), "0")
    admin = int(caps, 16) & (1 << 21) != 0  # CAP_SYS_ADMIN
    return admin and all(mapped(table, BOX_ID) for table in tables)


MAPS = ("uid_map", "gid_map")
PIDS = 2**22  # the most a pid can be (PID_MAX_LIMIT)
# the users a root relay's boxes run as, each its own: USERS_TOP - the pid outside of the
# process the box lives under (so none is another running box's; BOX_ID itself where a
# share cannot be idmapped), all below systemd's foreign range (2147352576-2147418111),
# which a container manager may hand to a container's processes
USERS_TOP = 2147352575
BOX_IDS = range(USERS_TOP - PIDS, USERS_TOP)


def mapped(table: str, given: int, count: int = 1) -> bool:
    """Whether the ids ``given`` to ``given + count - 1`` are one of a user namespace's
    (``table``: its uid_map's or gid_map's rows, inside, outside, count)."""
    for row in table.splitlines():
        words = row.split()
        if len(words) == 3 and all(w.isdigit() for w in words):
            inside, _, length = map(int, words)
            if inside <= given and given + count <= inside + length:
                return True
    return False


@functools.cache
def _own_users() -> bool:
    """Whether a root relay's boxes each run as a user of their own (:data:`BOX_IDS`):
    where the user namespace relay runs in maps them all (the machine's always does)."""
    try:
        table = Path("/proc/self/uid_map").read_text(encoding="ascii")
    except OSError:
        return False
    return mapped(table, BOX_IDS.start, len(BOX_IDS))


def _ids() -> list[str]:
    """Who a box's command is in its user namespace: relay's own user (root for relay run
    as root, :data:`BOX_ID` outside)."""
    return [str(os.getuid()), str(os.getgid())]


@dataclass(frozen=True)
class Sandbox:
    """Where one attempt's maker runs: its folder (outside every clone), its tree (the
    standalone clone), its scratch HOME, and what its process must not see."""

    folder: Path
    tree: Path
    home: Path
    hidden: tuple[Path, ...]
    level: str
    read_only: tuple[Path, ...] = ()  # what its process may read but not write (a grader's tree)
    # every box has a network of its own, loopback alone (no host listener, no abstract
    # socket); a role that needs the network goes out through relay's egress proxy, whose
    # socket (in the box's folder) a forwarder inside the box reaches (relay/ratchet/egress.py)
    egress: Path | None = None
    # the person's clone, where (in namespaces) its process sees the tree instead, and the
    # environment folders at its top (virtualenvs, node_modules) shown read-only in the tree
    shown_at: Path | None = None
    exposed: tuple[str, ...] = ()
    # the folders in its box folder its process writes besides its tree, scratch HOME and
    # temporary folder (a gate's report and the guard's verdicts, an agent's transcripts):
    # the rest of the box folder is read-only to it, so that nothing relay reads back or
    # binds there next time is a link or a file the box put in its place
    writable: tuple[Path, ...] = ()
    # whether its process sees the person's shares: never where a candidate is judged or
    # graded (:func:`judged`), but those the person lists for it, since every maker's box
    # writes them
    shared: bool = True

    @property
    def private(self) -> tuple[str, ...]:
        """What of the tree is never part of the candidate: the maker's files for relay
        and the person's environments shown in it."""
        return (*PRIVATE, *self.exposed)

    @property
    def owned(self) -> list[Path]:
        """The tree and scratch HOME where they lie in the box folder (its own code can
        rename them: they are checked, never followed, wherever relay uses them)."""
        return [p for p in (self.tree, self.home) if p.is_relative_to(self.folder)]

    def intact(self) -> str | None:
        """Why the box folder can no longer be trusted (its tree or scratch HOME swapped
        for a link or a file by code run in it), or None: relay then reads nothing
        through it."""
        for p in self.owned:
            try:
                mode = p.lstat().st_mode
            except FileNotFoundError:
                if p == self.tree:
                    return "its tree folder is gone"
                continue
            except OSError as err:
                return f"{p.name} cannot be read ({err.strerror})"
            if not stat.S_ISDIR(mode):
                return f"its {p.name} folder was replaced by a link or a file"
        return None

    def fresh_scratch(self) -> None:
        """Empty the scratch HOME and temporary folder an earlier run in this box folder
        wrote (links and files an earlier box put in their place are removed, never
        followed): what one gate's run of the candidate leaves there (a ``.pth`` in the
        user site, a tool's user configuration) must not change how the next gate runs."""
        for place in (self.home, self.tmp):
            if not place.is_relative_to(self.folder):
                continue
            try:
                mode = place.lstat().st_mode
            except FileNotFoundError:
                continue
            if not stat.S_ISDIR(mode):
                place.unlink()
                continue
            _owner_rwx(str(place))  # one the box locked: listable and writable again
            for child in place.iterdir():
                if child.is_dir() and not child.is_symlink():
                    remove_tree(child)
                else:
                    child.unlink(missing_ok=True)

    @property
    def brief(self) -> Path:
        return self.folder / "brief.md"

    @property
    def explain(self) -> Path:
        return self.tree / EXPLAIN_FILE

    @property
    def cannot(self) -> Path:
        return self.tree / CANNOT_FILE

    @property
    def history(self) -> Path:
        return self.folder / "history"

    @property
    def tmp(self) -> Path:
        """The box's own temporary folder (its /tmp in namespaces, its TMPDIR always)."""
        return self.folder / "tmp"

    def wrap(self, command: str, env: Mapping[str, str] | None = None) -> str:
        """``command`` as the maker runs it: inside the namespaces where they hold, with a
        /tmp of its own, each hidden folder behind an empty tmpfs, each hidden file behind
        /dev/null, the real HOME empty, and every other folder outside its box read-only.
        ``env`` is the environment it runs in (ours when not given): its PATH's folders in
        the machine's temporary folder or in HOME, the folders of the programs the command
        runs and of the files it names, relay's own and the interpreter the clone's
        virtualenv was made from are shown read-only (:func:`path_folders`)."""
        if self.level != NAMESPACES:
            return command
        dirs = [p for p in self.hidden if p.is_dir()]
        files = [p for p in self.hidden if p.exists() and not p.is_dir()]
        files += [p for p in SYSTEM_SECRETS if os.path.lexists(p) and p not in files]
        for folder in SYSTEM_SECRET_FOLDERS:
            with contextlib.suppress(OSError):
                files += [p for p in folder.iterdir() if not p.is_dir() and p not in files]
        box = self.folder.resolve()
        # the tree and scratch HOME by their names in the box folder, never resolved: an
        # earlier box of the same folder could have swapped either for a link (the set-up
        # refuses one, and relay reads neither through one: ``intact``)
        own = [p.relative_to(self.folder) for p in self.owned]
        own += [Path("tmp")]
        own += [p.relative_to(self.folder) for p in self.writable if p.is_relative_to(self.folder)]
        tree = self.tree.resolve()
        if self.tree.is_relative_to(self.folder):
            tree = box / self.tree.relative_to(self.folder)
        temp, private = temporary_roots(box)
        # the real HOME, empty: only what a role needs of it is shown (read-only) again
        real = real_homes()
        homes = emptied_homes(real, [temp, *private], [*private, *kept_places()])
        seen = [h for h in real if h in homes or h.is_relative_to(temp)]
        # and every folder at the top of / but the system's and the software's, so that
        # no socket bound there (in another network namespace, or after the box started)
        # is reached: a read-only folder does not stop connect()
        # (read-only once made: only the real HOME, emptied, takes what a box writes)
        tops = emptied_tops([temp, *private])
        emptied = sorted(dict.fromkeys([*tops, *homes]), key=lambda p: len(p.parts))
        shares = shared_folders(box, self.hidden, seen)
        unshared: list[Path] = []
        if not self.shared:  # each behind an empty folder of the box's own, writable
            judged = named_shares(JUDGED_SHARE_ENV)
            unshared = [s for s in shares if s not in judged]
            shares = [s for s in shares if s in judged]
        if _as_root():
            for share in shares:
                if not writable_by(share, BOX_ID):
                    raise LocalUsageError(
                        f"the box's user (id {BOX_ID}) cannot write {share}, shared by"
                        f" {SHARE_ENV}: give it that user (chown -R {BOX_ID}"
                        f" {shlex.quote(str(share))}) or take it out of the share"
                    )
        shown_here = [p for p in _SHOWN if p.is_dir() and p not in shares and p != box]
        source = os.environ if env is None else env
        path = source.get("PATH", "")
        programs = program_folders(command, path)
        tools = [source[n] for n in sorted(TOOL_VARIABLES) if source.get(n, "").startswith("/")]
        clone = self.shown_at
        bases = [b for n in self.exposed if clone for b in venv_base(clone / n)]
        extra = [*named_folders(command), *programs, *bases, *tools, *own_folders()]
        path = os.pathsep.join([path, *extra])
        for each in path_folders(path, [temp, *private], box, self.hidden, seen, tops):
            # (one in a share is seen through it, as the box may write it: never over it)
            inside = any(each.is_relative_to(s) for s in (*shares, *unshared))
            if each not in shown_here and not inside:
                shown_here.append(each)
        # a tool's folder shown whole holds its index's or registry's login: hidden in it
        files += [f for f in shown_secrets([*shown_here, *shares]) if f not in files]
        ro = [p for p in self.read_only if p.is_dir()]
        writable = [temp, *private, *homes, *shares, *unshared]
        shown = self.shown_at
        shows: list[str] = []
        if shown is not None and shown.is_dir() and shown in dirs:
            shows = [n for n in self.exposed if (self.tree / n).is_dir()]
            writable.append(shown)
            # the logins the person's environments hold (a virtualenv's pip.conf, node's
            # .npmrc), hidden where the box sees them: in the tree
            files += [tree / p.relative_to(shown) for p in environment_secrets(shown, shows)]
        else:
            shown = None
        given = {
            "RELAY_HIDE_DIRS": dirs,
            "RELAY_EMPTY_SHARES": unshared,
            "RELAY_HIDE_FILES": files,
            "RELAY_RO_DIRS": ro,
            "RELAY_BOX": [box],
            "RELAY_BOX_IN": [box.relative_to(temp)],
            "RELAY_TEMP": [temp],
            "RELAY_PRIVATE": private,
            "RELAY_HOMES": emptied,
            # outer folders first: one shown inside another is bound after it, so it stays
            "RELAY_SHARES": sorted([*shares, *shown_here], key=lambda p: len(p.parts)),
            "RELAY_SHOWN": shown_here,
            "RELAY_WRITABLE": writable,
            "RELAY_SOCKET_DIRS": socket_folders(),
            "RELAY_SOCKETS": host_sockets([box, tree]),
            "RELAY_OWN": own,
        }
        for named in (*(p for v in given.values() for p in v), tree, shown):
            if "\n" in str(named or ""):
                raise LocalUsageError(
                    f"cannot make a box for a path with a line break in it ({str(named)!r}):"
                    " rename or move it"
                )
        if box.is_relative_to("/dev"):  # the box's own /dev could not be made: never the host's
            raise LocalUsageError(
                f"cannot make a box under /dev ({box}): set TMPDIR to a folder on a disk"
                " (such as /tmp) for relay loop"
            )
        hide = " ".join(f"{k}={shlex.quote(chr(10).join(map(str, v)))}" for k, v in given.items())
        hide += f" RELAY_DEV=1 RELAY_TMPFS={box_tmpfs()} RELAY_INODES={TMPFS_INODES}"
        if not self.shared:  # a judged box: the tree's files relay checked out stay relay's
            hide += f" RELAY_JUDGED={shlex.quote(str(tree))}"
        if _as_root():  # (the shell's pid: the process the box lives under, see _ENTER)
            users = f" RELAY_USERS={USERS_TOP} RELAY_OUTER=$$" if _own_users() else ""
            hide += f" RELAY_DROP={BOX_ID}{users} RELAY_PROCS={box_procs()}"
        if shown is not None:
            hide += (
                f" RELAY_SHOW_AT={shlex.quote(str(shown))}"
                f" RELAY_TREE={shlex.quote(str(tree))}"
                f" RELAY_SHOW_DIRS={shlex.quote(chr(10).join(shows))}"
            )
        hide += f" RELAY_LOOPBACK={shlex.quote(sys.executable)}"
        links = chr(10).join(f"{at}{chr(10)}{to}" for at, to in top_links(tops))
        hide += f" RELAY_LINKS={shlex.quote(links)}"
        if self.egress is not None:  # the forwarder to the egress proxy, then the command
            command = f"{forwarder_command(self.egress)}\n{command}"
        argv = [*_outer(), "--net", *_enter(), *_ids(), command]
        boxed = " ".join(shlex.quote(a) for a in argv)
        if not (_as_root() and shares) or os.uname().machine in FILTERED:
            # the shell itself becomes the box (its assignments exported to what it execs):
            # no process of its own, nor one for env. (A root relay's set-up clears the
            # shares before the box starts; on a machine whose boxes the seccomp filter
            # holds, none can make a set-user-ID file there, so nothing is left to clear.)
            return f"{hide} exec {boxed}"
        # elsewhere the shares are cleared once the box is over too (see _STRIP), so the
        # shell stays; the box's exit status kept, or 1 where they could not be cleared
        after = f"relay_box=$?; {strip_command(shares)} || exit 1; exit $relay_box"
        return f"{hide} {boxed}\n{after}"

    def python_path(self) -> list[str]:
        """Env-level only (no mounts): where the candidate's code lies in the tree for each
        path the exposed virtualenvs' ``.pth`` files add inside the person's clone (an
        editable install's ``src``), so that a gate run with the person's virtualenv
        imports the candidate's code before the person's (PYTHONPATH comes first)."""
        if self.level == NAMESPACES or self.shown_at is None:
            return []
        clone = self.shown_at
        found: list[str] = []
        for name in self.exposed:
            for pth in sorted((clone / name).glob("lib*/python*/site-packages/*.pth")):
                with contextlib.suppress(OSError):
                    for line in pth.read_text(encoding="utf-8", errors="replace").splitlines():
                        entry = Path(line.strip())
                        if not line.strip() or line.startswith(("#", "import")):
                            continue
                        if entry.is_absolute() and entry.is_relative_to(clone):
                            mapped = str(self.tree / entry.relative_to(clone))
                            if mapped not in found:
                                found.append(mapped)
        return found

    def env(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` with the box's own temporary folder as TMPDIR (pytest's and coverage's
        too) and (env-level only) :meth:`python_path` first on PYTHONPATH."""
        self.tmp.mkdir(exist_ok=True)
        for name in ("TMPDIR", "TMP", "TEMP"):  # never the machine's shared one
            env[name] = str(self.tmp)
        # nor one the person's environment names for pytest (which would win over TMPDIR)
        # or for coverage's data: a folder a box in namespaces cannot see (every gate test
        # asking for tmp_path failed, coverage wrote no data), one every box of a run
        # shares, and pytest empties a --basetemp it is given as it starts
        env.pop("PYTEST_DEBUG_TEMPROOT", None)
        if "PYTEST_ADDOPTS" in env:
            env["PYTEST_ADDOPTS"] = without_basetemp(env["PYTEST_ADDOPTS"])
        if os.path.isabs(env.get("COVERAGE_FILE", "")):  # a relative one is in the tree
            del env["COVERAGE_FILE"]
        first = self.python_path()
        if first:
            rest = env.get("PYTHONPATH", "")
            env["PYTHONPATH"] = os.pathsep.join([*first, *filter(None, [rest])])
        return env


def without_basetemp(options: str) -> str:
    """pytest's options (as PYTEST_ADDOPTS gives them) less any ``--basetemp``: its
    temporary folders are then under TMPDIR. Options pytest could not read either are left
    as they are (its own error says what is wrong)."""
    try:
        words = shlex.split(options)
    except ValueError:
        return options
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word == "--basetemp":
            skip = True  # and its value, the next word
        elif not word.startswith("--basetemp="):
            kept.append(word)
    return options if len(kept) == len(words) else shlex.join(kept)


def temporary_roots(box: Path) -> tuple[Path, list[Path]]:
    """The shared temporary folder that holds ``box`` (the outermost of /tmp, /var/tmp and
    /dev/shm holding it, else its parent), which the box sees as its own scratch folder,
    and the other shared ones, each an empty tmpfs in the box: no box sees another's
    folder, nor anything else a process of the machine left there."""
    roots: list[Path] = []
    for name in SHARED_TEMP:
        with contextlib.suppress(OSError):
            real = Path(name).resolve()
            if real.is_dir() and "\n" not in str(real) and real not in roots:
                roots.append(real)
    parent = box.parent
    temp = next((r for r in roots if parent.is_relative_to(r)), parent)
    others = [r for r in roots if not r.is_relative_to(temp) and not temp.is_relative_to(r)]
    return temp, others


# where the machine keeps its services' sockets (docker's, systemd's, a database's): a
# read-only folder does not stop connect(), so each socket there is hidden behind /dev/null
SOCKET_DIRS = ("/run", "/var/run", "/var/lib/docker", "/var/lib/containerd")


def socket_folders() -> list[Path]:
    """The folders of :data:`SOCKET_DIRS` that exist, resolved, each once."""
    found: list[Path] = []
    for name in SOCKET_DIRS:
        with contextlib.suppress(OSError):
            real = Path(name).resolve()
            if real.is_dir() and real not in found:
                found.append(real)
    return found


def host_sockets(own: Sequence[Path]) -> list[Path]:
    """The unix sockets the machine has bound in a folder (``/proc/net/unix``, one read),
    but those under :data:`SOCKET_DIRS` (hidden folder by folder) and ``own`` (the box's
    folders): a read-only folder does not stop connect(), so each is hidden behind
    /dev/null wherever it lies. Abstract names need nothing: the box's network is its own."""
    try:
        table = Path("/proc/net/unix").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    skip = [*socket_folders(), *own]
    found: list[Path] = []
    for row in table.splitlines()[1:]:
        words = row.split(None, 7)
        if len(words) < 8 or not words[7].startswith("/"):
            continue  # unnamed, abstract (@...), or bound relative to a folder unknown here
        path = Path(words[7])
        if path in found or any(path.is_relative_to(p) for p in skip):
            continue
        found.append(path)
    return found


# the folders at the top of / a box keeps as they are, read-only: the system's, and the
# software's (/opt, /nix, /snap, /gnu: what is installed there, never a person's data)
SYSTEM_TOPS = frozenset(
    {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "proc", "dev", "sys"}
)
SOFTWARE_TOPS = frozenset({"opt", "nix", "snap", "gnu"})


def emptied_tops(temps: Sequence[Path], root: Path = Path("/")) -> list[Path]:
    """The folders at the top of ``root`` a box sees empty (/var, /srv, /home, /root, /mnt,
    /run, /work, any other): every folder there (not a link) but :data:`SYSTEM_TOPS`,
    :data:`SOFTWARE_TOPS` and the temporary folders ``temps`` (a box's own already). A
    read-only folder does not stop connect(): a socket bound in one, by a process in
    another network namespace or after the box started, is reached unless the folder is
    covered. What a role runs from there is shown again (:func:`path_folders`)."""
    found: list[Path] = []
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(root), key=lambda e: e.name):
            name = entry.name
            if name in SYSTEM_TOPS or name in SOFTWARE_TOPS or "\n" in name:
                continue
            with contextlib.suppress(OSError):
                if entry.is_symlink() or not entry.is_dir(follow_symlinks=False):
                    continue
                path = Path(entry.path)
                if any(path == t or path.is_relative_to(t) for t in temps):
                    continue
                found.append(path)
    return found


def top_links(tops: Sequence[Path]) -> list[tuple[Path, str]]:
    """The links at the top of each emptied top folder (``/var/run``, ``/var/lock``,
    NixOS's ``/run/current-system``) and where each leads, as written: made again in the
    box, where what they lead to is shown or not by the same rules as any path."""
    found: list[tuple[Path, str]] = []
    for top in tops:
        with contextlib.suppress(OSError):
            for entry in sorted(os.scandir(top), key=lambda e: e.name):
                with contextlib.suppress(OSError):
                    if entry.is_symlink():
                        to = os.readlink(entry.path)
                        if "\n" not in entry.path and "\n" not in to and to:
                            found.append((Path(entry.path), to))
    return found


def kept_places() -> list[Path]:
    """What a box keeps at its own path, which an emptied HOME must not hold: the
    machine's devices, processes and sockets."""
    return [Path("/dev"), Path("/proc"), *socket_folders()]


# relay's own folders a box's command reads (a landing's applier and its patch): shown
# read-only, at their own path, in every box made while they are listed
_SHOWN: list[Path] = []


@contextlib.contextmanager
def showing(folder: Path) -> Iterator[None]:
    """``folder`` (relay's own, in the machine's temporary folder, which a box does not
    see) shown read-only in every box made meanwhile. For a relay run as root, what it
    holds now is given to the boxes' group to read (a box sees root's files by their bits
    for others alone), and to no other user of the machine."""
    real = folder.resolve()
    if _as_root():
        readable_by_group(real, BOX_ID)
    _SHOWN.append(real)
    try:
        yield
    finally:
        _SHOWN.remove(real)


def readable_by_group(top: Path, gid: int) -> None:
    """``top`` and what it holds (no link followed) given to group ``gid``, which may read
    and search it, and run what its owner may run; nothing more (root stays its owner)."""
    for _, dirs, files, fd in os.fwalk(top, follow_symlinks=False):
        os.chown(fd, -1, gid)
        os.chmod(fd, stat.S_IMODE(os.stat(fd).st_mode) | 0o050)
        for name in [*dirs, *files]:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                mode = stat.S_IMODE(st.st_mode) | 0o040 | (0o010 if st.st_mode & 0o100 else 0)
                os.chown(name, -1, gid, dir_fd=fd, follow_symlinks=False)
                os.chmod(name, mode, dir_fd=fd)


def _within(path: Path, folder: Path) -> bool:
    """``path.is_relative_to(folder)`` for the absolute, normalised paths a box is made of,
    compared as text (pathlib's own splits both into parts on each call: a wrap makes
    hundreds of such checks)."""
    inner, outer = str(path), str(folder)
    if inner.startswith("//") or outer.startswith("//"):  # POSIX's own root: pathlib's way
        return path.is_relative_to(folder)
    return inner == outer or inner.startswith(outer if outer.endswith("/") else outer + "/")


def path_folders(
    path: str,
    temps: Sequence[Path],
    box: Path,
    hidden: Sequence[Path],
    homes: Sequence[Path] = (),
    tops: Sequence[Path] = (),
) -> list[Path]:
    """The folders on ``path`` (the programs the person runs) that lie in one of the
    machine's temporary folders, ``temps``, which a box sees as its own, in a real HOME,
    ``homes``, or in a folder at the top of / (``tops``: /var, /srv, /work...), which a
    box sees empty: shown read-only at their own path. A virtualenv's ``bin`` is the
    whole virtualenv, and the interpreter it was made from (its ``pyvenv.cfg``'s
    ``home``) comes with it; in a HOME, a version manager's or toolchain's folder is the
    whole folder (``~/.pyenv/shims``: ``~/.pyenv``), and ``~/.local/bin`` brings
    ``~/.local/lib`` (what ``pip --user`` installed); in a top folder, a version
    manager's folder is the whole folder wherever it lies (``/data/pyenv/shims``:
    ``/data/pyenv``) and a prefix's ``bin`` the prefix (an nvm or uv Python's). Never a
    HOME or top folder itself nor a folder holding one, the box's folder or one that lies
    in a hidden path; in a temporary folder never one that holds a hidden path either (in
    a HOME or top folder what it holds of them is hidden after it is shown)."""
    found: list[Path] = []
    roots = [*temps, *homes, *tops]
    todo = [p for p in path.split(os.pathsep) if p.strip() and os.path.isabs(p)]
    seen: set[str] = set()
    while todo:
        part = todo.pop(0)
        if part in seen:
            continue
        seen.add(part)
        with contextlib.suppress(OSError):
            real = Path(part).resolve()
            if (real.parent / "pyvenv.cfg").is_file():  # a virtualenv's bin: the virtualenv
                real = real.parent
            if (real / "pyvenv.cfg").is_file():
                todo += venv_base(real)
            home = next((h for h in homes if _within(real, h)), None)
            top = next((t for t in tops if _within(real, t)), None)
            if home is not None and real != home:
                real, more = _home_whole(real, home)
                todo += [str(m) for m in more]
            elif top is not None and real != top:
                real = _top_whole(real, top)
            if not real.is_dir() or "\n" in str(real) or real in found or real in roots:
                continue
            if not any(_within(real, t) for t in roots):
                continue
            if _within(box, real) or any(_within(h, real) for h in [*homes, *tops]):
                continue
            if any(_within(real, h) for h in hidden):
                continue
            if home is None and top is None and any(_within(h, real) for h in hidden):
                continue
            found.append(real)
    # what lies in a folder shown is shown with it
    return [p for p in found if not any(p != q and _within(p, q) for q in found)]


# the folders in a HOME where a version manager or a toolchain keeps what its PATH
# entries run (shims, versions, toolchains): shown whole; what else a toolchain needs
TOOL_HOMES = {
    ".pyenv": (),
    ".rbenv": (),
    ".nodenv": (),
    ".goenv": (),
    ".jenv": (),
    ".nvm": (),
    ".volta": (),
    ".bun": (),
    ".deno": (),
    ".asdf": (),
    ".sdkman": (),
    ".cargo": (".rustup",),
    ".rustup": (),
    ".local/pipx": (),
    ".local/share/pipx": (),
    ".local/bin": (".local/lib",),
    "go": (),
}


# credentials a tool's folder (shown whole) may hold at any depth: an index's or
# registry's login (a prefix's site-wide pip.conf, nvm's node's etc/npmrc, cargo's config)
TOOL_SECRET_NAMES = frozenset(
    {
        "pip.conf",
        "pip.ini",
        ".npmrc",
        "npmrc",
        ".pypirc",
        ".netrc",
        ".git-credentials",
        "auth.json",
        ".yarnrc",
        ".yarnrc.yml",
    }
)
TOOL_SECRET_SUFFIXES = (".pem", ".key")
# cargo's registry token may sit in its config as well as its credentials
CARGO_SECRETS = re.compile(r"^(?:config(?:\.toml)?|credentials.*)$")
# what a tool's folder holds in bulk and no login lives in: not walked
TOOL_BULK = frozenset(
    {
        "lib",
        "lib64",
        "include",
        "share",
        "bin",
        "man",
        "node_modules",
        "site-packages",
        "registry",
        "git",
        "toolchains",
        "downloads",
        "cache",
        "pkg",
        "src",
        "__pycache__",
    }
)
TOOL_WALK_DEPTH = 5
TOOL_WALK_CAP = 4000  # entries read per HOME at most: a box starts in well under a second


def tool_secrets(home: Path, cap: int = TOOL_WALK_CAP) -> list[Path]:
    """The credential files inside the tool folders a box shows whole from ``home``
    (:data:`TOOL_HOMES`), found by name at any depth down to :data:`TOOL_WALK_DEPTH`:
    ``pip.conf``, ``npmrc``, ``.pypirc``, ``auth.json``, ``*.pem``/``*.key``, and
    ``.cargo``'s ``config``/``credentials*``. A bounded walk (bulk folders such as
    ``lib``, ``registry`` and ``node_modules`` skipped, ``cap`` entries at most)."""
    roots = {home / name for name, more in TOOL_HOMES.items() for name in (name, *more)}
    return _walk_secrets(sorted(roots), cap)


def _walk_secrets(roots: Sequence[Path], cap: int) -> list[Path]:
    """The credential files under ``roots`` (see :func:`tool_secrets`), ``cap`` entries
    read at most. Walked as text (every box walks these folders again: a Path made of
    each folder met was most of the walk)."""
    found: list[Path] = []
    seen = 0
    # each folder by its path and name as text, in the order pathlib's walk took them (a
    # box is made several times an iteration, and walks up to ``cap`` entries each time)
    todo = collections.deque((os.fspath(root), root.name, 0) for root in roots)
    while todo and seen < cap:
        folder, folder_name, depth = todo.popleft()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        cargo_folder = folder_name == ".cargo"
        for entry in entries[: cap - seen]:
            seen += 1
            name = entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if depth < TOOL_WALK_DEPTH and name not in TOOL_BULK:
                    todo.append((entry.path, name, depth + 1))
                continue
            cargo = cargo_folder and CARGO_SECRETS.match(name)
            if cargo or name in TOOL_SECRET_NAMES or name.endswith(TOOL_SECRET_SUFFIXES):
                found.append(Path(entry.path))
    return found


def shown_secrets(folders: Sequence[Path], cap: int = TOOL_WALK_CAP) -> list[Path]:
    """The credential files in the ``folders`` a box shows (a tool's folder whole, a
    virtualenv, a prefix), found as :func:`tool_secrets` finds them in a HOME's: a
    prefix's ``pip.conf``, nvm's node's ``etc/npmrc``, ``.cargo``'s ``config.toml``
    wherever the folder lies. Each folder walked with its own ``cap``; a bulk folder
    (``lib``, ``site-packages``) shown on its own is not walked."""
    found: list[Path] = []
    for folder in folders:
        if folder.name in TOOL_BULK:
            continue
        found += [p for p in _walk_secrets([folder], cap) if p not in found]
    return found


def environment_secrets(clone: Path, names: Sequence[str], cap: int = TOOL_WALK_CAP) -> list[Path]:
    """The credential files in the environment folders ``names`` at the top of ``clone``
    (a virtualenv, node_modules: :func:`environment_folders`), found as
    :func:`shown_secrets` finds them, node_modules walked too."""
    found: list[Path] = []
    for name in names:
        found += [p for p in _walk_secrets([clone / name], cap) if p not in found]
    return found


# the names a version manager's or a toolchain's folder goes by outside a HOME (with or
# without the dot): shown whole wherever it lies in a folder at the top of /
TOOL_NAMES = frozenset(
    {n.rsplit("/", 1)[-1].lstrip(".") for n in TOOL_HOMES if not n.endswith("/bin")}
)


def _top_whole(real: Path, top: Path) -> Path:
    """``real`` (a folder in ``top``, a folder at the top of /) as a box shows it: the
    outermost version manager's or toolchain's folder holding it (:data:`TOOL_NAMES`)
    whole; a prefix's ``bin`` (not the top folder's own) the prefix; else ``real``."""
    parts = real.relative_to(top).parts
    for at, part in enumerate(parts):
        if part.lstrip(".") in TOOL_NAMES:
            return top.joinpath(*parts[: at + 1])
    if real.name in ("bin", "sbin") and real.parent != top:
        return real.parent
    return real


def _home_whole(real: Path, home: Path) -> tuple[Path, list[Path]]:
    """``real`` (a folder in ``home``) as a box shows it: a tool's folder whole, with the
    folders that tool needs beside it (:data:`TOOL_HOMES`); a package in ``node_modules``
    whole; else ``real`` itself."""
    for name, more in TOOL_HOMES.items():
        if real.is_relative_to(home / name):
            return home / name, [home / m for m in more]
    parts = real.parts
    if "node_modules" in parts:  # a package's bin: the package (``@scope/name`` too)
        at = len(parts) - 1 - parts[::-1].index("node_modules")
        keep = at + (3 if at + 1 < len(parts) and parts[at + 1].startswith("@") else 2)
        return Path(*parts[: min(keep, len(parts))]), []
    return real, []


def venv_base(venv: Path) -> list[str]:
    """The prefix of the interpreter a virtualenv was made from (``pyvenv.cfg``'s ``home``,
    its ``bin``): a virtualenv's ``python`` is a link to it."""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        for line in (venv / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()[:32]:
            key, _, value = line.partition("=")
            if key.strip() == "home" and os.path.isabs(value.strip()):
                base = Path(value.strip())
                return [str(base.parent if base.name in ("bin", "Scripts") else base)]
    return []


def own_folders() -> list[str]:
    """relay's own interpreter (its virtualenv, and the installation it was made from) and
    import path: where relay itself lies in a temporary folder (a clone of relay's in
    /tmp) or in HOME (``pipx``'s, a virtualenv in ``~``), a box shows it read-only."""
    executable = Path(sys.executable)
    folders = [str(executable.parent), sys.base_prefix, sys.prefix]
    with contextlib.suppress(OSError):
        folders.append(str(executable.resolve().parent))  # a virtualenv's link, followed
    return [*folders, *(p for p in sys.path if p)]


def program_folders(command: str, path: str) -> list[str]:
    """The folders of the programs ``command`` runs as ``path`` finds them, each link
    followed (``~/.local/bin/claude`` is a link into ``~/.local/share``), and of the
    interpreter a script's ``#!`` line names by absolute path."""
    from relay.loop.runenv import programs

    found: list[str] = []
    for program in programs(command):
        where = shutil.which(program, path=path) if "/" not in program else program
        if not where or not os.path.isabs(where):
            continue
        with contextlib.suppress(OSError):
            real = Path(where).resolve()
            found += [os.path.dirname(where), str(real.parent)]
            with real.open("rb") as script:
                head = script.read(256).split(b"\n", 1)[0]
            if head.startswith(b"#!"):
                words = head[2:].decode("utf-8", errors="replace").split()
                if words and os.path.isabs(words[0]):
                    found.append(os.path.dirname(words[0]))
                    found.append(str(Path(words[0]).resolve().parent))
    return found


def real_homes(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The person's real HOME (HOME's and the password database's, when they differ),
    resolved, each once: what every box sees empty."""
    names = [(os.environ if environ is None else environ).get("HOME", "")]
    with contextlib.suppress(ImportError, KeyError, OSError):
        import pwd

        names.append(pwd.getpwuid(os.getuid()).pw_dir)
    found: list[Path] = []
    for name in filter(None, (n.strip() for n in names)):
        with contextlib.suppress(OSError):
            real = Path(name).resolve()
            if real.is_dir() and real not in found:
                found.append(real)
    return found


def emptied_homes(homes: Sequence[Path], temps: Sequence[Path], keep: Sequence[Path]) -> list[Path]:
    """The ``homes`` a box covers with an empty folder: not one in a temporary folder (the
    box's own /tmp covers it already), nor the filesystem's root or a folder holding
    what a box keeps at its own path (``keep``: the other temporary folders, /dev, /proc,
    the machine's sockets), nor one inside another."""
    found: list[Path] = []
    for home in homes:
        if home == Path(home.anchor) or "\n" in str(home):
            continue
        if any(home.is_relative_to(t) for t in temps):
            continue
        if any(k.is_relative_to(home) for k in keep):
            continue
        found.append(home)
    return [h for h in found if not any(h != o and h.is_relative_to(o) for o in found)]


def named_folders(command: str) -> list[str]:
    """The folders of the files a command names by absolute path (``--maker
    /tmp/agents/maker.sh``): shown like its PATH's, so a script the person keeps in a
    temporary folder still runs in the box."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    return [os.path.dirname(w) for w in words if os.path.isabs(w) and os.path.isfile(w)]


def named_shares(name: str = SHARE_ENV) -> list[Path]:
    """The folders the variable ``name`` lists, resolved (those that resolve at all)."""
    found: list[Path] = []
    for part in filter(None, (p.strip() for p in os.environ.get(name, "").split(os.pathsep))):
        with contextlib.suppress(OSError):
            found.append(Path(part).resolve())
    return found


class SharedLookups:
    """What checking many commands against the shares asks of the file system, asked once:
    the shares, which of a PATH's folders lie in them, where PATH finds a program and the
    share a file lies in. A run's start checks every goal's acceptance command (done goals'
    too, a list that grows with the project), most of which run the same programs."""

    def __init__(self) -> None:
        self.shares = named_shares()
        self.judged = named_shares(JUDGED_SHARE_ENV)
        self._held: dict[tuple[str, bool], list[tuple[Path, Path]]] = {}
        self._found: dict[tuple[str, str], str | None] = {}
        self._within: dict[tuple[str, tuple[Path, ...]], list[tuple[Path, Path]]] = {}

    def held(self, path: str, *, role: bool) -> list[tuple[Path, Path]]:
        """The folders of ``path`` that lie in a share a judge (with ``role``, a role)
        does not see, with that share."""
        key = (path, role)
        if key not in self._held:
            seen = [] if role else self.judged
            unseen = [s for s in self.shares if s not in seen]
            folders = [f for f in path.split(os.pathsep) if f.startswith("/")]
            self._held[key] = [at for f in folders for at in in_shares(f, unseen)]
        return list(self._held[key])

    def which(self, program: str, path: str) -> str | None:
        """``shutil.which(program, path=path)``."""
        key = (program, path)
        if key not in self._found:
            self._found[key] = shutil.which(program, path=path)
        return self._found[key]

    def in_shares(self, path: str, shares: Sequence[Path]) -> list[tuple[Path, Path]]:
        """:func:`in_shares`."""
        key = (path, tuple(shares))
        if key not in self._within:
            self._within[key] = in_shares(path, shares)
        return list(self._within[key])


def shared_programs(
    command: str,
    path: str,
    shares: Sequence[Path] | None = None,
    *,
    lookups: SharedLookups | None = None,
) -> list[tuple[Path, Path]]:
    """What ``command`` runs (as ``path`` finds each program, links followed) or names by
    absolute path that lies in one of ``shares`` (by default those what judges a candidate
    does not see: :func:`unseen_shares`), with that share: (file, share). ``lookups``:
    what earlier commands' checks found, asked again of nothing."""
    from relay.loop.agents import parse_role
    from relay.loop.runenv import programs

    shares = unseen_shares() if shares is None else shares
    if not shares:
        return []
    agent = parse_role(command)  # a built-in adapter (``codex:review``) runs its CLI
    command = agent.name if agent is not None else command
    try:
        words = shlex.split(command)
    except ValueError:
        words = []
    files = [f for w in words for f in named_paths(w)]
    for program in programs(command):
        if "/" in program:
            where: str | None = program
        elif lookups is not None:
            where = lookups.which(program, path)
        else:
            where = shutil.which(program, path=path)
        if where:
            files.append(where)
    found: list[tuple[Path, Path]] = []
    for each in files:
        within = lookups.in_shares(each, shares) if lookups else in_shares(each, shares)
        for at in within:
            if at not in found:
                found.append(at)
    return found


# an absolute path inside a word: an option's value, a string in `python -c`'s code
_PATH_IN_WORD = re.compile(r"(?:(?<=[=:'\"(,\s]))/[^\s'\"(),;:=]+")
# what a path inside a word must end in to be a program run, not data read or written
_SCRIPTS = (".py", ".sh", ".bash", ".pl", ".rb", ".js", ".mjs", ".cjs", ".ts", ".lua", ".php")


def named_paths(word: str) -> list[str]:
    """The absolute paths one word of a command names, with ``~`` and ``$VAR`` expanded as
    the shell would (``sh ~/share/x.sh``, ``$HOME/share/x``), and the scripts it names
    inside it (``--config=/share/x.py``, ``runpy.run_path("/share/r.py")``)."""
    found = []
    for each in dict.fromkeys([word, os.path.expandvars(os.path.expanduser(word))]):
        if os.path.isabs(each):
            found.append(each)
        found += [m.group(0) for m in _PATH_IN_WORD.finditer(each) if m.group(0).endswith(_SCRIPTS)]
    return list(dict.fromkeys(found))


def unseen_shares() -> list[Path]:
    """The shares what judges a candidate does not see: all but those the person lists in
    ``RELAY_SANDBOX_SHARE_JUDGES`` (their word that no code a judge runs lies there)."""
    judged = named_shares(JUDGED_SHARE_ENV)
    return [s for s in named_shares() if s not in judged]


def in_shares(path: str, shares: Sequence[Path]) -> list[tuple[Path, Path]]:
    """``path`` (as written and with its links followed) with the share it lies in, for
    each of the two that lies in one of ``shares``."""
    found: list[tuple[Path, Path]] = []
    with contextlib.suppress(OSError, ValueError):
        for name in dict.fromkeys([Path(os.path.abspath(path)), Path(path).resolve()]):
            share = next((s for s in shares if name.is_relative_to(s)), None)
            if share is not None:
                found.append((name, share))
    return found


# variables that name code an interpreter loads at start-up or on import, before or
# beside a gate's own (a ``sitecustomize.py``, a ``.pth`` file, a module of a gate's name)
IMPORT_PATHS = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONHOME", "NODE_PATH",
                "PERL5LIB", "PERLLIB", "RUBYLIB", "CLASSPATH", "GEM_PATH", "GEM_HOME")  # fmt: skip


def refuse_shared_imports(env: Mapping[str, str], lookups: SharedLookups) -> None:
    """LocalUsageError where a variable a judged box keeps (``IMPORT_PATHS``) names a
    folder in a share the judges see: every box writes there, a maker's too, and every
    judged interpreter would load what a maker left (its ``sitecustomize.py``) before the
    gate's code. A judged share on PATH is the person's word that no program a judge runs
    lies there; code an interpreter loads by itself is not a program anyone names."""
    for name in IMPORT_PATHS:
        for entry in filter(None, env.get(name, "").split(os.pathsep)):
            held = lookups.in_shares(entry, lookups.judged)
            if held:
                folder, share = held[0]
                raise LocalUsageError(
                    f"{name} holds {folder}, in {share}, which {JUDGED_SHARE_ENV} shares with"
                    " the judges and every box writes (a maker's too): each judged run would"
                    f" load what a maker left there; take it off {name}, or out of the share"
                )


def refuse_shared_programs(
    command: str,
    path: str,
    what: str = "the gate",
    *,
    role: bool = False,
    lookups: SharedLookups | None = None,
) -> None:
    """LocalUsageError where ``command`` (a gate's, an acceptance's, a metric's, or with
    ``role`` a checker's, verifier's or red team's: what judges a candidate) runs or names
    a file in a share: every maker's box writes there, so it could change what judges its
    own change. A judge's PATH may hold a share the judges see (the person's word that no
    code a judge runs lies there); a role's PATH holds none, since a maker could put a
    program of the role's name there. ``lookups``: shared by the checks of one set of
    commands (:class:`SharedLookups`)."""
    lookups = SharedLookups() if lookups is None else lookups
    shares = lookups.shares
    held = lookups.held(path, role=role)
    if held:
        folder, share = held[0]
        if role:
            raise LocalUsageError(
                f"PATH holds {folder}, in {share}, which {SHARE_ENV} shares with every box (a"
                f" maker's too, which could put a program there): {what} `{command}` would run"
                " from it; take it off PATH, or take it out of the share"
            )
        raise LocalUsageError(
            f"PATH holds {folder}, in {share}, which {SHARE_ENV} shares with the makers' boxes"
            f" alone: {what} `{command}` would not find what lies there; move it out of the"
            f" share, or list {share} in {JUDGED_SHARE_ENV} too"
        )
    found = shared_programs(command, path, shares, lookups=lookups)
    if found:
        name, share = found[0]
        if share in lookups.judged:
            raise LocalUsageError(
                f"{what} `{command}` runs {name}, in {share}, which {JUDGED_SHARE_ENV} lists as"
                " holding no code a judge runs (every box writes it, a maker's too): move it"
                " out of the share"
            )
        raise LocalUsageError(
            f"{what} `{command}` runs {name}, in {share}, which {SHARE_ENV} shares with every"
            " box (a maker's too, which could change it): move it out of the share"
        )


def unnamed_judged_shares() -> list[str]:
    """The entries of ``RELAY_SANDBOX_SHARE_JUDGES`` that name no share of
    ``RELAY_SANDBOX_SHARE`` (a typo, a folder never shared): as written."""
    shares = named_shares()
    found: list[str] = []
    for part in filter(
        None, (p.strip() for p in os.environ.get(JUDGED_SHARE_ENV, "").split(os.pathsep))
    ):
        try:
            real = Path(part).resolve()
        except (OSError, RuntimeError):
            real = None
        if real not in shares and part not in found:
            found.append(part)
    return found


def refuse_unnamed_judged_shares() -> None:
    """LocalUsageError where ``RELAY_SANDBOX_SHARE_JUDGES`` names a folder that is no share:
    the judges would see less (or more) than the person meant, silently."""
    unnamed = unnamed_judged_shares()
    if unnamed:
        raise LocalUsageError(
            f"{JUDGED_SHARE_ENV} names {unnamed[0]}, which {SHARE_ENV} does not share: name"
            f" only folders {SHARE_ENV} lists (or add it there), or take it out"
        )


def writable_by(folder: Path, uid: int) -> bool:
    """Whether ``uid`` (in its own group alone, of the same number, as a box's user is)
    may make entries in ``folder`` by its mode: as its owner or its group (a folder anyone
    may write is never a share: :func:`shared_folders`)."""
    st = folder.stat()
    if st.st_uid == uid:
        return st.st_mode & 0o300 == 0o300
    return st.st_gid == uid and st.st_mode & 0o030 == 0o030


def shared_folders(box: Path, hidden: Sequence[Path], homes: Sequence[Path] = ()) -> list[Path]:
    """The folders the person shares with every box (``RELAY_SANDBOX_SHARE``), writable at
    their own path: only existing folders that neither hold nor lie in a hidden path or
    the box, never one holding a real HOME (``homes``: a box sees them empty), and never
    the filesystem's root."""
    found: list[Path] = []
    for real in named_shares():
        with contextlib.suppress(OSError):
            if not real.is_dir() or real == Path(real.anchor) or "\n" in str(real):
                continue
            near = [*hidden, box]
            if any(real.is_relative_to(h) or h.is_relative_to(real) for h in near):
                continue
            if any(h.is_relative_to(real) for h in homes):
                continue
            own = BOX_ID if _as_root() else os.getuid()  # (the set-up clears what it owns)
            st = real.stat()
            if st.st_mode & 0o002 and st.st_uid != own:
                raise LocalUsageError(
                    f"{real}, shared by {SHARE_ENV}, is writable by every local account: any"
                    " of them could change what a box runs from it; take write access from"
                    f" others (chmod -R o-w {shlex.quote(str(real))}) or take it out of the share"
                )
            if real not in found:
                found.append(real)
    for one in found:  # a box could swap what lies between the two for a link out
        for other in found:
            if one != other and one.is_relative_to(other):
                raise LocalUsageError(
                    f"{SHARE_ENV} names {one} inside {other}, which every box may change:"
                    f" name {other} alone"
                )
    return found


# what may sit at the top of a person's clone, untracked, that the project's commands run
# from: a virtualenv (a folder with pyvenv.cfg) or node's packages
ENVIRONMENT_DIRS = ("node_modules",)


def environment_folders(clone: Path, tree: Path) -> tuple[str, ...]:
    """The untracked environment folders at the top of the person's ``clone`` (each a
    virtualenv with a pyvenv.cfg, or node_modules) that ``tree`` (relay's clone of it)
    does not hold: what the sandbox shows read-only at the same place in ``tree``."""
    return tuple(n for n in environment_names(clone) if not os.path.lexists(tree / n))


def environment_names(clone: Path) -> tuple[str, ...]:
    """The environment folders at the top of the person's ``clone`` (each a virtualenv
    with a pyvenv.cfg, or node_modules), by name."""
    found: list[str] = []
    with contextlib.suppress(OSError):
        for entry in sorted(clone.iterdir()):
            name = entry.name
            if "\n" in name or name == ".git" or not entry.is_dir():
                continue
            if name in ENVIRONMENT_DIRS or (entry / "pyvenv.cfg").is_file():
                found.append(name)
    return tuple(found)


def hidden_paths(
    clone: Path, common: Path, remotes: Sequence[str], environ: Mapping[str, str]
) -> tuple[Path, ...]:
    """What the maker's process must not see: the person's clone and its git directory,
    the remotes that are folders on this machine, the real HOME's credential files, the
    login session's runtime folder (keyrings, agents), the SSH agent's socket and the agent
    CLIs' own folders (an agent role gets a copy of its own login: :func:`agent_login`).
    Only what exists, resolved, and nothing that would hide the whole filesystem or a
    parent of the temporary folder the maker works in."""
    homes = {environ.get("HOME", ""), str(Path.home())}
    found: list[Path] = [clone, common]
    for url in remotes:
        local = url.removeprefix("file://")
        if local.startswith("/") or local.startswith("."):
            found.append((clone / local) if local.startswith(".") else Path(local))
    for home in filter(None, homes):
        found += [Path(home) / name for name in (*HOME_SECRETS, *AGENT_HOMES)]
        found += tool_secrets(Path(home))
    for name in AGENT_DIR_ENV.values():
        found += [Path(environ[name])] if environ.get(name, "").strip() else []
    if environ.get("XDG_CONFIG_HOME"):
        found += [Path(environ["XDG_CONFIG_HOME"]) / name for name in XDG_SECRETS]
    if environ.get("XDG_DATA_HOME"):
        found += [Path(environ["XDG_DATA_HOME"]) / name for name in XDG_DATA_SECRETS]
    for name in SECRET_PLACES_ENV:
        found += [Path(p) for p in environ.get(name, "").split(os.pathsep) if p.strip()]
    for name, files in SECRET_FILES_ENV.items():
        if environ.get(name, "").strip():
            found += [Path(environ[name]) / each for each in files]
    runtime = environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
    found.append(Path(runtime))
    if environ.get("SSH_AUTH_SOCK"):
        found.append(Path(environ["SSH_AUTH_SOCK"]))
    temp = Path(tempfile.gettempdir()).resolve()
    kept: list[Path] = []
    for each in found:
        try:
            real = each.resolve()
        except OSError:
            continue
        try:
            if not real.exists() and not real.is_symlink():
                continue
        except OSError:  # unreadable to relay (a HOME not its own): so to the box, run as it
            continue
        if real == Path(real.anchor) or real == temp or temp.is_relative_to(real):
            continue
        if real in kept:
            continue
        kept.append(real)
    # what lies inside a hidden folder is hidden with it (and could not be mounted over)
    outer = [p for p in kept if not any(p != q and p.is_relative_to(q) for q in kept if q.is_dir())]
    return tuple(outer)


def hidden_for(clone: Path) -> tuple[Path, ...]:
    """:func:`hidden_paths` for ``clone`` as git describes it: its common git directory
    and every remote URL (fetch and push) that is a folder on this machine."""

    def git(*args: str) -> str:
        argv = ["git", *args]
        done = subprocess.run(argv, cwd=clone, capture_output=True, text=True, check=False)
        return done.stdout if done.returncode == 0 else ""

    from relay.edges.git import known_dirs

    known = known_dirs(clone)  # git's answer when the clone was found, if it was
    said = known.common if known is not None else None
    common = Path(
        (said if said is not None else git("rev-parse", "--git-common-dir").strip()) or ".git"
    )
    common = common if common.is_absolute() else clone / common
    urls: list[str] = []
    for name in git("remote").split():
        urls += git("remote", "get-url", "--all", name).split()
        urls += git("remote", "get-url", "--push", "--all", name).split()
    return hidden_paths(clone, common, urls, os.environ)


def scratch_home(home: Path) -> Path:
    """A HOME with an empty git configuration and nothing of the real one's."""
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text("", encoding="utf-8")
    (home / ".config" / "gh").mkdir(parents=True, exist_ok=True)
    return home


def agent_login(home: Path, agent: str, environ: Mapping[str, str]) -> dict[str, str]:
    """Copy into the scratch ``home`` what ``agent``'s CLI logs in with (its own login
    and settings files, from the real HOME or the folder its variable names), each a
    regular file of at most 16 MiB, 0600; the variables that point the CLI at the copy.
    What the role writes there goes with its box: nothing reaches the real folder."""
    real = environ.get("HOME", "")
    said: dict[str, str] = {}
    for name in AGENT_LOGINS.get(agent, ()):
        top, _, rest = name.partition("/")
        variable = AGENT_DIR_ENV.get(top, "")
        if rest and environ.get(variable, "").strip():
            source = Path(environ[variable]) / rest
            said[variable] = str(home / top)
        elif real:
            source = Path(real) / name
        else:
            continue
        data = read_regular(source, AGENT_LOGIN_CAP)
        if not data:
            continue
        target = home / name
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(target, flags, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    return said


_REMOVING: list[threading.Thread] = []  # box folders on their way out
_RECORDED: dict[Path, threading.Thread] = {}  # an attempt folder's record: its removal


def _remove_later(folder: Path) -> None:
    """Remove a judged box's folder while relay goes on (its processes are gone with its
    namespaces; nothing reads it again): on a slow disk, tenths of a second an iteration.
    Every removal ends before relay does."""
    _REMOVING[:] = [t for t in _REMOVING if t.is_alive()]
    thread = threading.Thread(target=remove_tree, args=(folder,), daemon=True)
    _REMOVING.append(thread)
    thread.start()


def _remove_recorded(folder: Path, record: Path) -> None:
    """Remove an attempt's folder while relay goes on (its maker's processes are gone with
    its namespaces, and nothing of it is read again), then ``record``, which names it: a
    run stopped meanwhile leaves the record, and the next attempt removes what is left
    (:func:`drop_stale`, which first waits for this removal). Every removal ends before
    relay does."""

    def remove() -> None:
        remove_tree(folder)
        with contextlib.suppress(OSError):
            record.unlink(missing_ok=True)

    _REMOVING[:] = [t for t in _REMOVING if t.is_alive()]
    thread = threading.Thread(target=remove, daemon=True)
    _REMOVING.append(thread)
    _RECORDED[record] = thread
    thread.start()


def _removed() -> None:
    """Wait for the box folders still on their way out (at exit)."""
    for thread in list(_REMOVING):
        thread.join()


atexit.register(_removed)


def _clone(
    run: Callable[..., subprocess.CompletedProcess[str]],
    clone: list[str],
    source: Path,
    tree: Path,
    commit: str,
) -> None:
    """``tree`` a new repository holding ``commit``'s own history alone (relay's candidate
    is on no branch: :func:`own_history`), with no remote and the clone command's
    ``--config`` settings. No template is copied in (the person's template hooks are for
    the person's own clones)."""
    git = clone[: clone.index("clone")]
    settings = [clone[i + 1] for i, word in enumerate(clone[:-1]) if word == "--config"]
    own_history(run, git, source, tree, commit)
    with (tree / ".git" / "config").open("a", encoding="utf-8") as config:
        for key, _, value in (s.partition("=") for s in settings):
            section, _, name = key.partition(".")
            quoted = value.replace("\\", "\\\\").replace('"', '\\"')
            config.write(f'[{section}]\n\t{name} = "{quoted}"\n')


def own_history(
    run: Callable[..., subprocess.CompletedProcess[str]],
    git: list[str],
    source: Path,
    tree: Path,
    commit: str,
) -> None:
    """``tree`` made a new repository holding ``commit``'s own history and the tags on it,
    nothing else of ``source``'s: no other branch's or tag's objects (an unmerged,
    embargoed branch of the person's clone never reaches a box), no remote. The objects
    in packs ``source``'s git wrote for this run (:func:`_history_packs`), copied in, never
    linked to ``source``'s nor to relay's own; from a shallow or grafted clone fetched by
    git's transport instead, which keeps a shallow history's bounds (no tags then)."""
    _new_repository(run, git, tree)
    _fill_history(run, git, source, tree, commit)


def _fill_history(
    run: Callable[..., subprocess.CompletedProcess[str]],
    git: list[str],
    source: Path,
    tree: Path,
    commit: str,
) -> None:
    """``commit``'s own history and its tags put in the repository at ``tree`` (a new
    one, or a box made ahead that no code has run in: :class:`BoxAhead`), as
    :func:`own_history` says."""
    dot = source / ".git"
    if not dot.is_dir():  # a linked worktree's: its clone's git directory
        said = run([*git, "-C", str(source), "rev-parse", "--git-common-dir"]).stdout.strip()
        dot = source / said  # relative to source where git says it so
    if any((dot / n).exists() for n in ("shallow", "info/grafts")):
        fetch = ["fetch", "-q", "--no-tags", "--no-write-fetch-head", "--update-shallow"]
        run([*git, "-C", str(tree), *fetch, str(source), commit])
        return
    # the tags on the history as it is: a replace ref (``git replace --graft``) would put
    # another branch's commits, and its tags, in it
    listing = [*git, "--no-replace-objects", "-C", str(source), "for-each-ref"]
    listing += [f"--merged={commit}", "--format=%(objectname) %(refname)", "refs/tags"]
    listed = "" if _tagless(dot) else run(listing).stdout
    tags = sorted(
        (ref, sha) for sha, _, ref in (line.partition(" ") for line in listed.split("\n")) if ref
    )
    _history_packs(run, git, source, dot, commit, tags, tree / ".git" / "objects" / "pack")
    packed = "".join(f"{sha} {ref}\n" for ref, sha in tags)
    _write_new(tree / ".git" / "packed-refs", packed)


@dataclass(frozen=True)
class _Packed:
    """The packs relay wrote for one commit's history: its files, how many packs they are
    and the tags (ref, object) packed with it."""

    files: tuple[Path, ...]
    packs: int
    tags: frozenset[tuple[str, str]]


PACK_CHAIN = 16  # packs a history is kept in before it is packed whole again
PACKS_KEPT = 8  # the commits whose packs a run keeps for the next box
PARENTS_WALKED = 4  # how far back a commit's packed ancestor is looked for
_PACKS: dict[tuple[str, str], _Packed] = {}  # (git directory, commit): its history's packs
_PACKS_LOCK = threading.Lock()
_PACK_FOLDER: list[Path] = []  # the run's folder of packs and of an empty repository


def _pack_folder() -> Path:
    """The run's own folder of packs (and an empty repository to copy): in the temporary
    folder, closed to every other user, seen by no box (each has a /tmp of its own),
    named and recorded as a judged box's so that a killed run's goes with theirs
    (:func:`drop_stale_boxes`), removed as relay ends."""
    with _PACKS_LOCK:
        if not _PACK_FOLDER or not _PACK_FOLDER[0].is_dir():  # (gone: a cleaner took it)
            folder = Path(tempfile.mkdtemp(prefix=f"{JUDGED_PREFIX}packs-"))
            (folder / OWNER_FILE).write_text(_owner(), encoding="ascii")
            _PACK_FOLDER[:] = [folder]
        return _PACK_FOLDER[0]


def _drop_packs() -> None:
    """The run's folder of packs removed (at exit)."""
    with _PACKS_LOCK:
        _PACKS.clear()
        for folder in _PACK_FOLDER:
            remove_tree(folder)
        _PACK_FOLDER.clear()


atexit.register(_drop_packs)


def _new_repository(
    run: Callable[..., subprocess.CompletedProcess[str]], git: list[str], tree: Path
) -> None:
    """``tree`` a new, empty repository with no template: a copy of one git made for the
    run (``git init`` once a run, not once a box)."""
    empty = _pack_folder() / "empty"
    if not (empty / ".git" / "HEAD").is_file():
        making = Path(tempfile.mkdtemp(prefix="empty-", dir=empty.parent))
        run([*git, "init", "-q", "--template=", str(making)])
        with contextlib.suppress(OSError):
            making.rename(empty)  # another thread's may be there first: either does
        if not (empty / ".git" / "HEAD").is_file():
            empty = making
    tree.mkdir(parents=True, exist_ok=True)
    shutil.copytree(empty / ".git", tree / ".git", symlinks=True)


def _history_packs(
    run: Callable[..., subprocess.CompletedProcess[str]],
    git: list[str],
    source: Path,
    dot: Path,
    commit: str,
    tags: Sequence[tuple[str, str]],
    into: Path,
) -> None:
    """The pack files that hold ``commit``'s history and ``tags`` (and nothing else of
    ``dot``'s) copied into ``into`` (a copy of its own: a box may rewrite it) from the
    run's folder of packs. A commit packed before is packed again only
    for tags it did not have; one whose parent (or an ancestor a few commits back, as its
    objects say) was packed gets a pack of what that one lacks beside that one's packs
    (a baseline, relay's record of it and a candidate on it are each a commit on the last:
    one pack of the whole history a run, not one a box)."""
    folder = _pack_folder()
    key = str(dot.resolve())
    tagged = frozenset(tags)
    for whole in (False, True):  # the second time, where another box's dropped its packs
        base = None if whole else _packed_ancestor(dot, key, commit, tagged)
        if base is not None and base[0] == commit and base[1].tags == tagged:
            with _PACKS_LOCK:
                if all(f.exists() for f in base[1].files):
                    _copy_packs(base[1].files, into)
                    return
            continue
        had = base[1].tags if base is not None else frozenset()
        fresh = [sha for ref, sha in tags if (ref, sha) not in had]
        tips = "".join(f"{sha}\n" for sha in dict.fromkeys([commit, *fresh]))
        if base is not None:
            tips += f"^{base[0]}\n"  # what the ancestor's packs hold already
        # the objects as they are (a replace ref is no object of the history's)
        packing = ("--no-replace-objects", "-C", str(source), "pack-objects", "--revs", "-q")
        # (in a folder of this call's own: two boxes packing the same objects at once would
        # write the same names, and one's dropping could take the other's files)
        out = Path(tempfile.mkdtemp(prefix="p-", dir=folder))
        if _same_device(dot / "objects", out):
            names = run([*git, *packing, str(out / "pack")], input=tips).stdout.split()
        else:  # git writes a pack beside the clone's objects, then renames it: not across
            names = [_pack_across(run, git, packing, source, out, tips)]
        made = tuple(sorted(p for name in names for p in out.glob(f"pack-{name}.*")))
        if not made:  # (pack.packSizeLimit writes several packs, each name a line)
            raise LocalUsageError(f"git pack-objects wrote no pack of {commit} in {source}")
        earlier = base[1].files if base is not None else ()
        packed = _Packed((*earlier, *made), (base[1].packs if base else 0) + 1, tagged)
        with _PACKS_LOCK:
            if not whole and not all(f.exists() for f in earlier):
                continue
            _PACKS.pop((key, commit), None)
            _PACKS[(key, commit)] = packed
            dropped: set[Path] = set()
            while len(_PACKS) > PACKS_KEPT:
                dropped.update(_PACKS.pop(next(iter(_PACKS))).files)
            for each in dropped - {f for got in _PACKS.values() for f in got.files}:
                each.unlink(missing_ok=True)
            _copy_packs(packed.files, into)
            return


def _pack_across(
    run: Callable[..., subprocess.CompletedProcess[str]],
    git: list[str],
    packing: Sequence[str],
    source: Path,
    out: Path,
    tips: str,
) -> str:
    """The pack of ``tips`` written into ``out`` where that folder is on another file
    system than ``source``'s git directory (a temporary folder on tmpfs, the clone on a
    disk): git writes a pack beside the clone's objects and renames it, which cannot cross
    file systems (and leaves its temporary files in the clone when it fails), so it is
    streamed here instead and indexed here. Its name."""
    env = _box_git_env()
    streamed = out / "streamed.pack"
    with streamed.open("wb") as sink:
        subprocess.run(
            [*git, *packing, "--stdout"], input=tips.encode(), stdout=sink,
            stderr=subprocess.PIPE, check=True, env=env,
        )  # fmt: skip
    said = run([*git, "-C", str(source), "index-pack", str(streamed)]).stdout.split()
    name = said[-1] if said else ""
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", name):
        raise LocalUsageError(f"git index-pack named no pack for {source}: {said!r}")
    for each in out.glob("streamed.*"):  # the pack, its index, a reverse index
        each.rename(out / f"pack-{name}{each.suffix}")
    return name


def _same_device(objects: Path, folder: Path) -> bool:
    """Whether the clone's ``objects`` folder and relay's ``folder`` are on one file
    system (one that cannot be told is taken as another: streaming works either way)."""
    try:
        return os.stat(objects).st_dev == os.stat(folder).st_dev
    except OSError:
        return False


def _copy_packs(files: Sequence[Path], into: Path) -> None:
    """``files`` copied into ``into`` (under the lock: no other box's packing drops them
    meanwhile), but those it holds already: a box made ahead and moved to a later commit
    has its first packs (a pack's name is its content's hash, and no code has run there)."""
    for each in files:
        if not os.path.lexists(into / each.name):
            shutil.copy(each, into / each.name)


def _packed_ancestor(
    dot: Path, key: str, commit: str, tags: frozenset[tuple[str, str]]
) -> tuple[str, _Packed] | None:
    """``commit`` or the nearest of its ancestors (at most :data:`PARENTS_WALKED` back,
    through the parents its own objects name) whose packs this run wrote, where they hold
    no tag but ``tags``' and are fewer than :data:`PACK_CHAIN`; None where there is none,
    that one's will not do or the walk meets an object that is not loose (no process is
    run to find one)."""
    frontier = [commit]
    for _ in range(PARENTS_WALKED + 1):
        following: list[str] = []
        for each in frontier:
            with _PACKS_LOCK:
                got = _PACKS.get((key, each))
            if got is not None:  # the nearest packed decides: a long chain is packed whole
                return (each, got) if got.tags <= tags and got.packs < PACK_CHAIN else None
            parents = loose_parents(dot / "objects", each)
            if parents is None:
                return None
            following += parents
        frontier = list(dict.fromkeys(following))[:8]
    return None


def loose_parents(objects: Path, commit: str) -> list[str] | None:
    """The parents of ``commit`` as its loose object in ``objects`` names them (git's
    commit header: ``tree``, then each ``parent``); None where it is no loose commit or
    its header cannot be read whole."""
    import zlib

    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit):
        return None
    try:
        with (objects / commit[:2] / commit[2:]).open("rb") as loose:
            raw = loose.read(1 << 16)
        data = zlib.decompressobj().decompress(raw, 1 << 14)
    except (OSError, zlib.error):
        return None
    kind, nul, body = data.partition(b"\0")
    if not nul or not kind.startswith(b"commit "):
        return None
    lines = body.split(b"\n")
    if not lines or not lines[0].startswith(b"tree "):
        return None
    parents: list[str] = []
    for line in lines[1:-1]:  # the last may be cut short
        if not line.startswith(b"parent "):
            return parents
        parents.append(line[7:].decode("ascii", "replace"))
    return None


def _tagless(common: Path) -> bool:
    """Whether the git directory ``common`` surely holds no tag, as its files say (no
    process): no loose one under ``refs/tags``, none in ``packed-refs``, and refs kept as
    files (a reftable's are asked of git)."""
    try:
        if any((common / n).exists() for n in ("reftable", "commondir")):
            return False
        if any((common / "refs" / "tags").iterdir()):
            return False
    except FileNotFoundError:
        pass  # no folder of tags
    except OSError:
        return False
    try:
        with (common / "packed-refs").open("rb") as packed:
            return not any(b" refs/tags/" in line for line in packed)
    except FileNotFoundError:
        return True
    except OSError:
        return False


@contextlib.contextmanager
def standalone(
    source: Path,
    commit: str,
    branch: str,
    *,
    hidden: Sequence[Path],
    record: Path | None = None,
    prefix: str = "relay-attempt-",
    remove_later: bool = False,
) -> Iterator[Sandbox]:
    """A standalone clone of ``source`` at ``commit`` on ``branch`` under relay's own
    temporary folder (objects copied, never hard-linked to ``source``'s, which a maker
    could rewrite in place; no remote; the maker's private files excluded), with its
    scratch HOME; removed afterwards. ``record`` keeps the folder's path while it
    exists, so that a killed run's folder goes when the next attempt starts."""
    if record is not None:
        drop_stale(record)
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    (folder / OWNER_FILE).write_text(_owner(), encoding="ascii")
    tree = folder / "tree"
    if record is not None:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(f"{folder}\n", encoding="utf-8")
    try:
        git, run = _box_git()
        identity = (("user.name", "relay loop maker"), ("user.email", "maker@relay.invalid"))
        written = [w for key, value in identity for w in ("--config", f"{key}={value}")]
        _clone(run, [*git, "clone", "-q", *written], source, tree, commit)
        run([*git, "-C", str(tree), "checkout", "-q", "-f", "-B", branch, commit])
        shown = source.resolve()
        exposed = environment_folders(shown, tree)
        at = level()
        exclude = tree / ".git" / "info" / "exclude"
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("a", encoding="utf-8") as out:
            out.write("".join(f"/{name}\n" for name in PRIVATE))
            # the mount points of the person's environments: never part of the candidate
            out.write("".join(f"/{name}\n" for name in exposed))
        for name in exposed:  # a mount point in namespaces; a link where none is made
            if at == NAMESPACES:
                (tree / name).mkdir()
            else:
                (tree / name).symlink_to(shown / name, target_is_directory=True)
        home = scratch_home(folder / "home")
        (folder / "tmp").mkdir()
        yield Sandbox(folder, tree, home, tuple(hidden), at, shown_at=shown, exposed=exposed)
    finally:
        if record is not None:
            _remove_recorded(folder, record)
        elif remove_later:
            _remove_later(folder)
        else:
            remove_tree(folder)


def _box_git() -> tuple[list[str], Callable[..., subprocess.CompletedProcess[str]]]:
    """The git command relay makes and moves boxes with (no hook, no GIT_ variable of the
    person's) and how it is run (checked, its output captured)."""
    git = ["git", "-c", f"core.hooksPath={os.devnull}"]
    env = _box_git_env()
    run = functools.partial(subprocess.run, capture_output=True, text=True, check=True, env=env)
    return git, run


def _box_git_env() -> dict[str, str]:
    """The environment relay's git for boxes runs in: no GIT_ variable of the person's."""
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def move_box(box: Sandbox, source: Path, made_at: str, commit: str, branch: str) -> None:
    """``box``, made ahead at ``made_at`` and never run in, moved to ``commit`` on
    ``branch`` so that it is the box made there: that commit's own history and tags put in
    its repository, then checked out (git writes only what differs), each file the move
    wrote given the time a fresh checkout would have given it (:func:`_checkout_times`),
    and the reflogs a fresh box's. Relay's git in the box's repository is safe only while
    no code has run there. Refused (LocalUsageError, or git's error) where a fresh box
    would differ otherwise: a commit ``made_at`` is no ancestor of (the box holds that
    one's history, which must be the commit's own; the person's replace refs not
    followed), a tag the box was made with gone since (its object is in the box's packs),
    a ``.gitattributes`` changed between them (a file whose blob did not change would keep
    the bytes the old attributes gave it), a file removed (a folder that held more entries
    keeps its size), or another set of the person's environments shown (a commit tracking
    or no longer tracking such a folder's place)."""
    if not lists_hashed(box.folder.parent.resolve()):  # (see ahead_allowed)
        raise LocalUsageError("its file system lists entries as made: a box is made afresh")
    git, run = _box_git()
    plain = [*git, "--no-replace-objects"]
    run([*plain, "-C", str(source), "merge-base", "--is-ancestor", made_at, commit])
    dot = box.tree / ".git"
    refs, packs = dot / "packed-refs", dot / "objects" / "pack"
    tagged = set(read_own(refs).splitlines()) if refs.exists() else set()
    before = {p: os.lstat(p).st_mtime_ns for p in (refs, packs, *packs.iterdir()) if p.exists()}
    _fill_history(run, git, source, box.tree, commit)
    if tagged - (set(read_own(refs).splitlines()) if refs.exists() else set()):
        raise LocalUsageError(f"a tag on {made_at} is gone: a box is made afresh")
    # written before the checkout in a fresh box: older than every file the tree holds
    first = min(before.values(), default=time.time_ns())
    for each in (refs, packs, *packs.iterdir()):
        if os.path.lexists(each):
            at = before.get(each, first)
            os.utime(each, ns=(at, at), follow_symlinks=False)
    inside = [*plain, "-C", str(box.tree)]
    said = run([*inside, "diff", "--name-status", "--no-renames", "-z", made_at, commit]).stdout
    words = said.split("\0")
    changed = dict(zip(words[1::2], words[0::2], strict=False))  # path: its status letter
    if any(p.rpartition("/")[2] == ".gitattributes" for p in changed):
        raise LocalUsageError(f"{commit} changes a .gitattributes: a box is made there afresh")
    if "D" in changed.values():
        raise LocalUsageError(f"{commit} removes a file: a box is made there afresh")
    for path, status in changed.items():  # an ext4 folder's size follows its entries' order
        folder = box.tree / path.rpartition("/")[0]
        with contextlib.suppress(OSError):
            info = os.lstat(folder)
            if status == "A" and info.st_size > info.st_blksize:
                raise LocalUsageError(f"{commit} adds to a large folder: a box is made afresh")
    top = set(run([*inside, "ls-tree", "--name-only", "-z", commit]).stdout.split("\0"))
    shown = box.shown_at
    if shown is not None and tuple(n for n in environment_names(shown) if n not in top) != (
        box.exposed
    ):
        raise LocalUsageError(f"{commit} shows other environments: a box is made there afresh")
    root = os.lstat(box.tree).st_mtime_ns
    run([*inside, "checkout", "-q", "-f", "-B", branch, commit])
    listed = [f for f in run([*inside, "ls-files", "-z"]).stdout.split("\0") if f]
    _checkout_times(box.tree, listed, {p for p in changed if p}, root)
    run([*inside, "update-index", "-q", "--refresh"])  # the written files' new times
    _fresh_reflogs(box.tree / ".git", made_at, commit)


def _coarse_tick() -> int:
    """The file system clock's step, in nanoseconds (a file's times are taken from it)."""
    try:  # (Python names no CLOCK_REALTIME_COARSE: Linux's is clock 5)
        return max(1, int(time.clock_getres(getattr(time, "CLOCK_REALTIME_COARSE", 5)) * 1e9))
    except OSError:
        return 1


def _checkout_times(tree: Path, files: Sequence[str], written: set[str], root: int) -> None:
    """The times of the files the move ``written`` (of ``files``, the tree's in the
    index's order) and of their folders, as the box's first checkout, which wrote every
    file in that order, would have given them: the time of the file before each in that
    order, plus that checkout's pace per file, in whole steps of the file system's clock
    (files written within one step are as old as each other), never past the file after
    it; each folder the time its last entry was made. The files the move did not write
    keep their times (the index's record of them stays true). ``root``: the tree's own
    time before the move (the environments' mount points were made after the checkout)."""
    top = os.fspath(tree)
    kept = {}
    for name in files:
        if name not in written:
            with contextlib.suppress(OSError):
                kept[name] = os.lstat(f"{top}/{name}").st_mtime_ns
    known = [kept[n] for n in files if n in kept]
    pace = (known[-1] - known[0]) // (len(known) - 1) if len(known) > 1 else 0
    tick = _coarse_tick()
    after: list[int | None] = [None] * len(files)
    following: int | None = None
    for i in range(len(files) - 1, -1, -1):  # the next kept file's time, for each
        after[i] = following
        following = kept.get(files[i], following)
    times: dict[str, int] = {}
    last = known[0] if known else time.time_ns()
    run = 0
    for i, name in enumerate(files):
        if name in kept:
            last, run = kept[name], 0
            times[name] = last
            continue
        run += 1
        at = last + (pace * run // tick) * tick
        limit = after[i]
        at = min(at, limit) if limit is not None else at
        times[name] = at
        os.utime(f"{top}/{name}", ns=(at, at), follow_symlinks=False)
    made = {""}
    folders: dict[str, int] = {}
    for name in files:  # each folder's last entry, as a checkout in this order makes them
        at, parts = times[name], name.split("/")
        for k in range(1, len(parts)):
            folder = "/".join(parts[:k])
            if folder not in made:
                made.add(folder)
                folders["/".join(parts[: k - 1])] = at
        folders["/".join(parts[:-1])] = at
    touched = {""}
    for name in written:
        parts = name.split("/")
        touched.update("/".join(parts[:k]) for k in range(1, len(parts)))
    for folder in touched & folders.keys():
        stamp = max(folders[folder], root) if not folder else folders[folder]
        with contextlib.suppress(OSError):
            path = f"{top}/{folder}" if folder else top
            os.utime(path, ns=(stamp, stamp), follow_symlinks=False)


def _fresh_reflogs(dot: Path, made_at: str, commit: str) -> None:
    """The box's reflogs as a box made at ``commit`` has them: each its first entry alone,
    which named ``made_at``, naming ``commit`` (and no ORIG_HEAD)."""
    (dot / "ORIG_HEAD").unlink(missing_ok=True)
    stamp = str(int(time.time()))
    for log in [p for p in (dot / "logs").rglob("*") if p.is_file()]:
        first = log.read_text(encoding="utf-8").partition("\n")[0]
        head, tab, message = first.partition("\t")
        words = head.split(" ")
        if len(words) < 4 or not tab:
            continue
        words[1], words[-2] = commit, stamp
        _write_new(log, " ".join(words) + tab + message.replace(made_at, commit) + "\n")


def _write_new(path: Path, text: str) -> None:
    """``text`` in a new file at ``path`` (what was there removed first, a link never
    followed), made as git makes its files (0666 less the umask)."""
    path.unlink(missing_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(path, flags, 0o666), "w", encoding="utf-8") as out:
        out.write(text)


def _identity(folder: Path) -> tuple[int, int, int] | None:
    """A real folder's device, inode and owner (None for a link, a file or nothing)."""
    try:
        info = os.lstat(folder)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_uid) if stat.S_ISDIR(info.st_mode) else None


def ahead_allowed() -> bool:
    """Whether boxes may be made ahead here: where the boundary is namespaces (no code run
    in another box sees the temporary folder); where no other account may rename the
    temporary folder or an entry of it, nor a folder on the way to it (each this user's or
    root's, and open to no other writer unless sticky), since a box made ahead waits there
    for seconds before relay's git writes in it; and where that folder's file system lists
    a folder's entries in an order of its own (ext4's hash order), never in the order they
    were made, which a moved box's files were not made in (:func:`lists_hashed`)."""
    if level() != NAMESPACES:
        return False
    temp = Path(tempfile.gettempdir())
    for way in {Path(os.path.abspath(temp)), temp.resolve()}:
        for folder in (way, *way.parents):
            try:
                info = os.stat(folder)
            except OSError:
                return False
            if info.st_uid not in (0, os.getuid()):
                return False
            if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
                return False
    return lists_hashed(temp.resolve())


_HASHED: dict[str, bool] = {}  # a temporary folder: whether it lists entries hashed


def lists_hashed(folder: Path) -> bool:
    """Whether ``folder``'s file system lists a folder's entries in an order of its own
    (ext4's hash order), never in the order they were made (tmpfs, btrfs, xfs, ext4
    without its hash index): asked once a run, of sixteen names made in a folder of
    relay's there, which come back in neither that order nor its reverse."""
    key = os.fspath(folder)
    if key not in _HASHED:
        names = [f"e{i:02}" for i in range(16)]
        try:
            probe = Path(tempfile.mkdtemp(prefix="relay-order-", dir=folder))
            try:
                for name in names:
                    (probe / name).touch()
                listed = os.listdir(probe)
            finally:
                shutil.rmtree(probe, ignore_errors=True)
        except OSError:
            listed = names
        _HASHED[key] = listed not in (names, names[::-1])
    return _HASHED[key]


_AHEAD: set[BoxAhead] = set()  # boxes made ahead and not taken yet: dropped as relay ends


class BoxAhead:
    """A box made on a thread of its own while relay does other work (the baseline's
    acceptance, the maker), then taken once, at the commit it is wanted at: moved there
    before any code has run in it (:func:`move_box`), it is the box relay would have made
    there, and its checkout is off the iteration's path. A box that could not be made or
    moved is dropped, and the caller makes one as it did before (:func:`taken_or_made`)."""

    def __init__(
        self,
        source: Path,
        commit: str,
        branch: str,
        make: Callable[[], contextlib.AbstractContextManager[Sandbox]],
        *,
        after: BoxAhead | None = None,
    ) -> None:
        self.source, self.commit, self.branch = source, commit, branch
        self._stack = contextlib.ExitStack()
        self._box: Sandbox | None = None
        self._made: tuple[int, int, int] | None = None
        self._thread = threading.Thread(
            target=self._make, args=(make, after), name="relay-box-ahead", daemon=True
        )
        _AHEAD.add(self)
        self._thread.start()

    def _make(
        self,
        make: Callable[[], contextlib.AbstractContextManager[Sandbox]],
        after: BoxAhead | None,
    ) -> None:
        """Make the box, once ``after``'s is made: one checkout at a time beside what relay
        does meanwhile (two cores' worth), the one wanted first made first."""
        if after is not None:
            after._thread.join()
        with contextlib.suppress(Exception):  # the caller makes its box itself then
            self._box = self._stack.enter_context(make())
            self._made = _identity(self._box.folder)
            # its index made current now, before its move: the checkout wrote it within
            # the clock step of its last files, which git would hash again then
            git, run = _box_git()
            run([*git, "-C", str(self._box.tree), "update-index", "-q", "--refresh"])

    def _still_made(self, box: Sandbox) -> bool:
        """Whether the box folder is still the folder made for it (the same real folder of
        this user's, no link): another account that could rename entries of the temporary
        folder could have put one of its own in its place (see :func:`ahead_allowed`)."""
        return self._made is not None and _identity(box.folder) == self._made

    def take(self, commit: str, into: contextlib.ExitStack) -> Sandbox | None:
        """The box, moved to ``commit``, its removal handed to ``into``; None where it
        could not be made or moved (what was made is removed then)."""
        self._thread.join()
        _AHEAD.discard(self)
        box, self._box = self._box, None
        made = self._stack.pop_all()
        into.push(made)
        if box is None:
            return None
        if not self._still_made(box):
            made.close()
            return None
        if commit != self.commit:
            try:
                move_box(box, self.source, self.commit, commit, self.branch)
            except (subprocess.CalledProcessError, OSError, LocalUsageError, ValueError):
                made.close()  # (ValueError: a name git said that is not UTF-8)
                return None
        return box

    def close(self) -> None:
        """The box removed, untaken."""
        self._thread.join()
        _AHEAD.discard(self)
        self._box = None
        self._stack.close()


def _drop_ahead() -> None:
    """The boxes made ahead and never taken, removed (at exit)."""
    for ahead in list(_AHEAD):
        ahead.close()


atexit.register(_drop_ahead)  # before _removed's turn: atexit runs the last registered first


@contextlib.contextmanager
def taken_or_made(
    ahead: BoxAhead | None,
    commit: str,
    make: Callable[[], contextlib.AbstractContextManager[Sandbox]],
) -> Iterator[Sandbox]:
    """The box made ahead, moved to ``commit``; else one ``make`` makes now."""
    with contextlib.ExitStack() as stack:
        box = ahead.take(commit, stack) if ahead is not None else None
        if box is None:
            box = stack.enter_context(make())
        yield box


JUDGED_BRANCH = "relay-loop/judged"


def _judged_box(
    source: Path, commit: str, hidden: Sequence[Path]
) -> contextlib.AbstractContextManager[Sandbox]:
    """A judged box's standalone clone, the folders a killed run left removed first."""
    drop_stale_boxes()
    return standalone(
        source, commit, JUDGED_BRANCH, hidden=hidden, prefix=JUDGED_PREFIX, remove_later=True
    )


def judged_ahead(
    source: Path, commit: str, *, hidden: Sequence[Path], after: BoxAhead | None = None
) -> BoxAhead:
    """A judged box made ahead at ``commit`` (:class:`BoxAhead`), for :func:`judged`
    (``after``: once that one is made)."""
    hidden = tuple(hidden)
    make = functools.partial(_judged_box, source, commit, hidden)
    return BoxAhead(source, commit, JUDGED_BRANCH, make, after=after)


@contextlib.contextmanager
def judged(
    source: Path,
    commit: str,
    *,
    hidden: Sequence[Path],
    graders: bool = False,
    ahead: BoxAhead | None = None,
) -> Iterator[Sandbox]:
    """Where the candidate's code runs, or a role grades it: a standalone clone of
    ``source`` at ``commit`` behind the maker's boundary (the same hidden paths, a
    scratch HOME, no remote), so that nothing its code or a role does reaches the
    person's clone, its git directory, relay's secrets or the real HOME. With ``graders``
    its tree is read-only for the role's process too (a checker reads, never writes). It
    sees no share but those listed in ``RELAY_SANDBOX_SHARE_JUDGES``: every maker's box
    writes them. The judged box folders a killed run left go first (:func:`drop_stale_boxes`).
    ``ahead``: the box made ahead for it (:func:`judged_ahead`), where there is one."""
    with taken_or_made(ahead, commit, lambda: _judged_box(source, commit, hidden)) as box:
        if _as_root():
            open_folders(box.tree)
        # its git folder read-only: what one run leaves there (an exclude file a linter
        # obeys, a cache) would reach the next, and nothing of it is the candidate's
        kept = (box.tree,) if graders else (box.tree / ".git",)
        yield replace(box, read_only=kept, shared=False)


def open_folders(tree: Path) -> None:
    """Every folder of a judged tree relay checked out (its git folder aside) made root's
    and sticky, open to all (a relay run as root): each box, a user of its own, adds its
    outputs beside the candidate's files but renames, replaces or removes none of them nor
    of the folders (and a folder's change time moves only when its entries do: a box's
    user is never given it). No other account reaches the tree: its box folder is closed."""
    for at, dirs, _, fd in os.fwalk(tree, follow_symlinks=False):
        if at == str(tree):
            dirs[:] = [d for d in dirs if d != ".git"]
        os.chmod(fd, 0o1777)


def hand_in(source: Path, dest: Path) -> None:
    """Copy ``source`` into a box folder as a new file of relay's (:func:`put_text`)."""
    put_text(dest, read_own(source))


def put_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` as a new file put in its place: whatever code run in an
    earlier box of that folder left there (a link to a host file, a folder) is replaced,
    never written through."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISDIR(path.lstat().st_mode):
            remove_tree(path)
    fd, temporary = tempfile.mkstemp(prefix=".relay-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, path)


def read_own(path: Path) -> str:
    """A file relay wrote, read through no link (one code in a box put in its place
    reads as an error, not as the file it points at)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as given:
        return given.read().decode("utf-8", "replace")


def own_folder(path: Path) -> Path:
    """``path`` (in a box folder) as a folder of relay's: a link or file an earlier box
    put there is removed first, never followed."""
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISDIR(path.lstat().st_mode):
            path.unlink()
    path.mkdir(parents=True, exist_ok=True)
    return path


def read_private(path: Path, secrets: Sequence[str] = ()) -> str:
    """A file the maker wrote for relay (its account of the change, its reason for not
    doing a goal), read only where it is a regular file of its own (see
    :func:`read_regular`), NULs dropped, and redacted (the machine's secrets and
    ``secrets``) before it can reach a commit message, the spine or the output."""
    text = read_regular(path).decode("utf-8", errors="replace").replace("\0", "")
    return redact_secrets(text, secrets) if text else ""


def read_regular(path: Path, cap: int = PRIVATE_CAP) -> bytes:
    """At most ``cap`` bytes of ``path`` where it is a regular file with no other hard
    link, every folder on the way and the file opened without following a link; b""
    otherwise (a maker could leave a link to relay's token, /proc or a FIFO there)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    dirs = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_DIRECTORY", 0)
    path = Path(os.path.abspath(path))
    data = b""
    opened: list[int] = []
    try:
        fd = os.open(path.anchor, dirs)
        opened.append(fd)
        for part in path.parts[1:-1]:
            fd = os.open(part, dirs, dir_fd=fd)
            opened.append(fd)
        fd = os.open(path.name, flags, dir_fd=fd)
        opened.append(fd)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            return b""
        while len(data) < cap:
            got = os.read(fd, cap - len(data))
            if not got:
                break
            data += got
    except OSError:
        return b""
    finally:
        for each in opened:
            os.close(each)
    return data


def maker_branch(tree: Path) -> str | None:
    """The branch the maker's clone has checked out, read from its HEAD file as a regular
    file (never through git, which would run what the maker configured)."""
    head = read_regular(tree / ".git" / "HEAD", 4096).decode("utf-8", errors="replace")
    return head.strip().removeprefix("ref: ").strip() if head.startswith("ref: ") else None


def clone_secrets(common: Path) -> list[str]:
    """The secrets relay keeps in a clone's git directory (its node token, the roles'
    named secrets), so that nothing a role writes for relay can carry them out."""
    found: list[str] = []
    with contextlib.suppress(OSError):
        found.append((common / "relay" / "token").read_text(encoding="utf-8").strip())
    with contextlib.suppress(OSError, ValueError):
        import json

        kept = json.loads((common / "relay" / "loop" / "loop-secrets.json").read_text("utf-8"))
        stack = [kept]
        while stack:
            each = stack.pop()
            if isinstance(each, str):
                found.append(each)
            elif isinstance(each, dict):
                stack += list(each.values())
            elif isinstance(each, list):
                stack += each
    return [s for s in found if len(s) >= 6]


def redact_secrets(text: str, secrets: Sequence[str] = ()) -> str:
    """``text`` through relay's redaction: the machine's facts and secret-named variables,
    and ``secrets`` (relay's token, the roles' named secrets) masked like any secret."""
    from relay.redact import Redactor, gather_facts

    for secret in sorted(filter(None, (s.strip() for s in secrets)), key=len, reverse=True):
        text = text.replace(secret, "<secret>")
    try:
        return Redactor(gather_facts()).redact(text)
    except Exception:  # the explicit secrets are gone already; never lose the text itself
        return text


def warm_redaction() -> None:
    """Load relay's redaction on a thread of its own (its patterns are compiled as it is
    imported: about a tenth of a CPU-second), started once a role's process is: what the
    role writes for relay is redacted once it ends, and relay's own process is idle while
    it runs (not while relay still makes the role's box: the thread's imports would hold
    the interpreter's lock from that work, each of its system calls waiting on them). A
    failure to load is left for that use to say."""
    if "relay.redact" in sys.modules:
        return

    def warm() -> None:
        with contextlib.suppress(Exception):
            redact_secrets("relay")

    threading.Thread(target=warm, name="relay-warm-redaction", daemon=True).start()


def drop_stale(record: Path) -> None:
    """Remove the attempt folder a killed run left (``record`` names it), once its maker
    is stopped: only a folder of relay's own, under the temporary folder. A removal of
    this process's still on its way (:func:`_remove_recorded`) ends first."""
    pending = _RECORDED.pop(record, None)
    if pending is not None:
        pending.join()
    try:
        stale = Path(record.read_text(encoding="utf-8").strip())
    except OSError:
        return
    temp = Path(tempfile.gettempdir()).resolve()
    if stale.name.startswith("relay-attempt-") and stale.resolve().parent == temp:
        remove_tree(stale)
    record.unlink(missing_ok=True)


def _boot() -> str:
    """This boot's id ("-" where the system keeps none): a pid of another boot is no run."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip() or "-"
    except OSError:
        return "-"


def _started(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, /proc's 22nd field of its
    stat), None where no such process is; "-" where the system cannot say."""
    try:
        said = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except FileNotFoundError:
        if Path("/proc/self/stat").exists():
            return None
    except OSError:
        return "-"
    else:
        fields = said.rpartition(")")[2].split()
        return fields[19] if len(fields) > 19 else "-"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except OSError:
        pass
    return "-"


def _owner() -> str:
    """This run as a box folder's owner record says it."""
    pid = os.getpid()
    return f"{pid} {_started(pid) or '-'} {_boot()}\n"


def owner_gone(record: str, *, boot: str, started: str | None) -> bool:
    """Whether the run a box folder's owner ``record`` names is over, given this ``boot``
    and when the process of the record's pid ``started`` (None: no such process): a
    record that is none of relay's is never over (its folder is left alone), a pid of
    another boot is over, and a pid now of a process started at another time is another
    process's (pids are reused)."""
    words = record.split()
    if len(words) != 3 or not words[0].isdigit():
        return False
    _, start, was = words
    if "-" not in (boot, was) and was != boot:
        return True
    if started is None:
        return True
    return "-" not in (start, started) and start != started


def drop_stale_boxes(temp: Path | None = None) -> list[Path]:
    """Remove the judged box folders a killed run of this user left in the temporary
    folder (``temp``): a real folder of this user's whose owner record (a regular file)
    names a run that is over. A live run's folder, a link, another user's folder or one
    with no record of relay's is left alone. The folders removed."""
    temp = temp or Path(tempfile.gettempdir()).resolve()
    try:
        entries = [e for e in os.scandir(temp) if e.name.startswith(JUDGED_PREFIX)]
    except OSError:
        return []
    boot, dropped = _boot(), []
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or not _own_id(info.st_uid):
            continue
        folder = Path(entry.path)
        record = read_regular(folder / OWNER_FILE, 256).decode("ascii", "replace")
        words = record.split()
        pid = int(words[0]) if words and words[0].isdigit() else None
        started = _started(pid) if pid is not None else "-"
        if not owner_gone(record, boot=boot, started=started):
            continue
        _remove_box(folder)
        dropped.append(folder)
    return dropped


def _own_id(uid: int) -> bool:
    """Whether ``uid`` owns box folders of this user's: the user, and for root the boxes'
    own users."""
    return uid == os.getuid() or ((uid in BOX_IDS or uid == BOX_ID) and _as_root())


def _remove_box(folder: Path) -> None:
    """``folder`` removed, never through a link: the guard's verdict folders, which a
    killed run left unlistable, made listable first (through no link)."""
    from relay.ratchet.guard_run import _own_dir

    with contextlib.suppress(OSError):
        for each in os.scandir(folder):
            if each.name.startswith("relay-guard-") and each.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.close(_own_dir(Path(each.path), "out", 0o700))
    remove_tree(folder)


def remove_tree(folder: Path) -> None:
    """``folder`` removed as far as it can be, never through a link: a folder in it that
    code run in a box made unlistable or unwritable (mode 000, which an ordinary user's
    removal cannot enter) is made owner-rwx (itself, opened without following a link,
    never what a link leads to) and the removal tried again; other errors are ignored."""
    top = os.path.abspath(folder)
    opened: list[bool] = []

    def failed(path: str | Path, err: BaseException) -> None:
        if isinstance(err, PermissionError):
            at = os.fspath(path)  # rmtree says the folder it was given as it was given
            for each in (at, os.path.dirname(at)):
                if each == top or each.startswith(top + os.sep):
                    opened.append(_owner_rwx(each))

    while True:
        opened.clear()
        if sys.version_info >= (3, 12):
            shutil.rmtree(folder, onexc=lambda _f, p, e: failed(p, e))
        else:
            shutil.rmtree(folder, onerror=lambda _f, p, e: failed(p, e[1]))
        if not any(opened) or not os.path.lexists(folder):
            return


def _owner_rwx(path: str) -> bool:
    """Make the folder at ``path`` (a folder of this user's, not a link) readable, writable
    and enterable by its owner, through a descriptor of the folder itself; whether its
    mode changed."""
    o_path = getattr(os, "O_PATH", 0)
    if not o_path or not os.path.isdir("/proc/self/fd"):
        return False
    try:
        fd = os.open(path, o_path | os.O_NOFOLLOW | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        mode = os.fstat(fd)
        if mode.st_uid != os.getuid() or mode.st_mode & 0o700 == 0o700:
            return False
        os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(mode.st_mode) | 0o700)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
