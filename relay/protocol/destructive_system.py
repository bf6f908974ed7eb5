"""What services, packages, machines and infrastructure programs do that is destructive,
and the table of every rule :mod:`relay.protocol.destructive` looks a program up in (the
rules for files, disks and git are in :mod:`relay.protocol.destructive_rules`)."""

from __future__ import annotations

from relay.protocol.destructive_rules import (
    FILE_RULES,
    Rule,
    long_flags,
    names,
    outside,
    positional,
    registry_path,
    short_flags,
    slash,
    writes_outside,
)


def _sub_in(spec: str, reason: str, valued: frozenset[str] = frozenset()) -> Rule:
    """A rule for ``program <verb> ...`` (``spec``: the program, then its verbs):
    destructive when the first word that is not an option is one of the verbs."""
    program, *verbs = spec.split()

    def rule(args: list[str]) -> str | None:
        words = [w for w in positional(args, valued) if not w.startswith("\\\\")]
        if words and words[0].lower() in verbs:
            return f"{reason} ({program} {words[0].lower()})"
        return None

    return rule


def _always(reason: str) -> Rule:
    return lambda args: reason


def _service(args: list[str]) -> str | None:
    words = positional(args)
    if len(words) >= 2 and words[1].lower() in ("stop", "disable", "uninstall"):
        return f"service change (service {words[0][:30]} {words[1].lower()})"
    return None


def _schtasks(args: list[str]) -> str | None:
    if any(a.lower() in ("/delete", "/change", "-delete", "-change") for a in args):
        return "scheduled task change (schtasks /delete)"
    return None


def _global_npm(args: list[str]) -> str | None:
    verbs = {"uninstall", "remove", "rm", "r", "un", "unlink"}
    words = positional(args)
    wide = (
        "g" in short_flags(args) or long_flags(args) & {"--global"} or "--location=global" in args
    )
    if words and words[0].lower() in verbs and wide:
        return "global package removal (npm uninstall -g)"
    if words[:2] == ["global", "remove"]:
        return "global package removal (yarn global remove)"
    return None


def _python(args: list[str]) -> str | None:
    for index, arg in enumerate(args[:-1]):
        if arg == "-m" and args[index + 1] in ("pip", "pip3"):
            return _sub_in("pip uninstall", "package removal")(args[index + 2 :])
    return None


def _uv(args: list[str]) -> str | None:
    words = positional(args)
    if words[:2] in (["pip", "uninstall"], ["tool", "uninstall"]):
        return "package removal (uv pip uninstall)"
    return None


def _rpm(args: list[str]) -> str | None:
    if "e" in short_flags(args) or "--erase" in long_flags(args):
        return "package removal (rpm -e)"
    return None


def _dpkg(args: list[str]) -> str | None:
    if any(a in ("-r", "-P", "--remove", "--purge") for a in args):
        return "package removal (dpkg --remove)"
    return None


def _pacman(args: list[str]) -> str | None:
    if any(a.startswith("-R") for a in args) or "--remove" in long_flags(args):
        return "package removal (pacman -R)"
    return None


def _msiexec(args: list[str]) -> str | None:
    if slash(args, "x") or any(a.lower() == "/uninstall" for a in args):
        return "package removal (msiexec /x)"
    return None


def _docker(args: list[str]) -> str | None:
    valued = frozenset({"-H", "--host", "--context", "-c", "--config", "-l", "--log-level"})
    words = [w.lower() for w in positional(args, valued)]
    pair = tuple(words[:2])
    flags, longs = short_flags(args), long_flags(args)
    if pair in {("system", "prune"), ("volume", "prune"), ("volume", "rm"), ("container", "prune")}:
        return f"removes containers or data (docker {' '.join(pair)})"
    removal = pair[:1] in {("rm",), ("rmi",)} or pair == ("container", "rm")
    if removal and ("f" in flags or "--force" in longs):
        return "forced removal (docker rm -f)"
    if "down" in words[:2] and ("v" in flags or "--volumes" in longs):
        return "removes volumes (docker compose down -v)"
    return None


def _kubectl(args: list[str]) -> str | None:
    valued = frozenset({"-n", "--namespace", "--context", "--kubeconfig", "-s", "--server"})
    words = [w.lower() for w in positional(args, valued)]
    if words and words[0] in ("delete", "drain"):
        return f"cluster change (kubectl {words[0]})"
    return None


def _terraform(args: list[str]) -> str | None:
    words = [w.lower() for w in positional(args)]
    if words[:1] == ["destroy"]:
        return "destroys infrastructure (terraform destroy)"
    if words[:1] == ["apply"] and any(a.lower() in ("-destroy", "--destroy") for a in args):
        return "destroys infrastructure (terraform apply -destroy)"
    if words[:2] in (["state", "rm"], ["workspace", "delete"], ["stack", "rm"]):
        return f"destroys infrastructure state ({' '.join(words[:2])})"
    return None


def _cloud(args: list[str]) -> str | None:
    words = [w.lower() for w in positional(args)]
    for word in words[:4]:
        if word.startswith(("delete", "terminate", "destroy", "purge")) or word == "rb":
            return f"deletes cloud resources ({word[:30]})"
        if word == "rm" and ({"r", "R"} & short_flags(args) or "--recursive" in long_flags(args)):
            return "deletes cloud storage recursively (rm --recursive)"
    return None


def _init(args: list[str]) -> str | None:
    return "shuts the machine down (init 0/6)" if positional(args)[:1] in (["0"], ["6"]) else None


def _kill(args: list[str]) -> str | None:
    rest = args
    if rest and rest[0] in ("-s", "-n"):
        rest = rest[2:]
    elif rest and rest[0].startswith("-") and rest[0] != "--":
        rest = rest[1:]  # the signal
    if any(a in ("-1", "1") for a in rest if a != "--"):
        return "kills every process (kill -1)"
    return None


def _crontab(args: list[str]) -> str | None:
    return "removes the crontab (crontab -r)" if "r" in short_flags(args) else None


def _net(args: list[str]) -> str | None:
    words = [w.lower() for w in args]
    if words[:1] == ["stop"]:
        return "service change (net stop)"
    if words[:1] in (["user"], ["localgroup"], ["share"]) and "/delete" in words:
        return f"deletes an account or share (net {words[0]} /delete)"
    return None


def _cipher(args: list[str]) -> str | None:
    return "wipes free space (cipher /w)" if any(a.lower().startswith("/w") for a in args) else None


def _update_rc(args: list[str]) -> str | None:
    return f"{_SERVICE} (update-rc.d)" if {"remove", "disable"} & set(args) else None


def _chkconfig(args: list[str]) -> str | None:
    return f"{_SERVICE} (chkconfig)" if {"off", "--del"} & set(args) else None


def _wmic(args: list[str]) -> str | None:
    words = {w.lower() for w in args}
    return "deletes or uninstalls (wmic)" if {"delete", "uninstall"} & words else None


def _reg_edit(args: list[str]) -> str | None:
    return "registry change (regedit /s)" if slash(args, "s") else None


def _ps_registry(args: list[str]) -> str | None:
    return "registry change (HKLM:)" if any(registry_path(a) for a in args) else None


def _rsync(args: list[str]) -> str | None:
    if any(f.startswith("--del") for f in long_flags(args)) or "--remove-source-files" in args:
        return "deletes files at the destination (rsync --delete)"
    return None


def _sed(args: list[str]) -> str | None:
    if not ("i" in short_flags(args) or "--in-place" in long_flags(args)):
        return None
    valued = names("-e --expression -f --file -l --line-length")
    files = positional(args, valued)
    if not (set(args) & valued or any(a.startswith(("--expression=", "--file=")) for a in args)):
        files = files[1:]  # the first is the script
    if any(outside(f) for f in files):
        return "edits a file outside the work tree in place (sed -i)"
    return None


def _mv(args: list[str]) -> str | None:
    valued = names("-t --target-directory -S --suffix")
    paths = positional(args, valued)
    sources = paths if set(args) & {"-t", "--target-directory"} else paths[:-1]
    if any(outside(p) for p in sources):
        return "moves something outside the work tree (mv)"
    return _mv_target(args, "mv")


def _tar(args: list[str]) -> str | None:
    """Extracting into a directory outside the work tree (``-C /``), or keeping the
    archive's absolute paths (``-P``)."""
    first = args[0] if args and not args[0].startswith("-") else ""
    flags = short_flags(args) | set(first)
    longs = long_flags(args)
    if not ("x" in flags or longs & {"--extract", "--get"}):
        return None
    places = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-C", "--directory")]
    places += [a.split("=", 1)[1] for a in args if a.startswith("--directory=")]
    places += [a[2:] for a in args if a.startswith("-C") and len(a) > 2]
    if "C" in set(first) and len(args) >= 3:  # tar xfC a.tar /dir (old style, in order)
        places += args[1:]
    if any(writes_outside(p) for p in places):
        return "extracts outside the work tree (tar -C)"
    if "P" in flags or "--absolute-names" in longs:
        return "extracts absolute paths (tar -P)"
    return None


def _unzip(args: list[str]) -> str | None:
    places = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-d"]
    if any(writes_outside(p) for p in places):
        return "extracts outside the work tree (unzip -d)"
    return None


def _copy(program: str) -> Rule:
    """``cp``, ``install``, ``ln``: destructive by the destination (the last path, or
    ``-t``'s) outside the work tree."""
    return lambda args: _mv_target(args, program)


def _mv_target(args: list[str], program: str) -> str | None:
    """Whether a move or copy writes its destination outside the work tree."""
    valued = names("-t --target-directory -S --suffix -m --mode -o --owner -g --group")
    paths = positional(args, valued)
    targets = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-t", "--target-directory")]
    targets += [a.split("=", 1)[1] for a in args if a.startswith("--target-directory=")]
    for target in targets or (paths[-1:] if len(paths) >= 2 else []):
        if writes_outside(target):
            return f"overwrites {target[:40]} outside the work tree ({program})"
    return None


_FIREWALL_WRITES = names(
    "--flush --delete-chain --zero --delete --policy --append --insert --replace --new-chain"
    " --rename-chain"
)


def _iptables(args: list[str]) -> str | None:
    if set("FXZDPAIRNE") & short_flags(args) or _FIREWALL_WRITES & long_flags(args):
        return "firewall change (iptables -F)"
    return None


def _passwd(args: list[str]) -> str | None:
    if "S" in short_flags(args) or "--status" in long_flags(args):
        return None
    return "account change (passwd)"


def _unlink(args: list[str]) -> str | None:
    if any(outside(p) for p in positional(args)):
        return "removes a file outside the work tree (unlink)"
    return None


def _gh(args: list[str]) -> str | None:
    words = [w.lower() for w in positional(args, names("-R --repo -X --method -H --header"))]
    if len(words) >= 2 and words[1] in ("delete", "delete-asset"):
        return f"deletes on GitHub (gh {words[0][:20]} {words[1]})"
    methods = [args[i + 1].upper() for i, a in enumerate(args[:-1]) if a in ("-X", "--method")]
    if words[:1] == ["api"] and ("DELETE" in methods or "--method=DELETE" in args):
        return "deletes on GitHub (gh api -X DELETE)"
    return None


_PACKAGES = "package removal"
_SERVICE = "service change"
_SYSTEMCTL_VALUED = names(
    "-H --host -M --machine -t --type -p --property -s --signal --root -n --lines -o --output"
    " --state"
)
_VERBS: dict[str, tuple[str, str]] = {  # program: (its destructive verbs, what they do)
    "reg": ("delete add import restore copy load unload", "registry change"),
    "nft": ("flush delete add insert replace create destroy", "firewall change"),
    "ufw": (
        "disable reset delete deny reject allow limit insert prepend route default",
        "firewall change",
    ),
    "sc": ("delete config stop create failure sdset", _SERVICE),
    "launchctl": ("unload remove bootout disable kill", _SERVICE),
    "rc-update": ("del delete", _SERVICE),
    "vssadmin": ("delete resize", "deletes shadow copies"),
    "helm": ("uninstall delete del un", "cluster change"),
    "apt-get": ("remove purge autoremove autopurge", _PACKAGES),
    "apt": ("remove purge autoremove autopurge", _PACKAGES),
    "aptitude": ("remove purge", _PACKAGES),
    "dnf": ("remove erase autoremove", _PACKAGES),
    "yum": ("remove erase autoremove", _PACKAGES),
    "microdnf": ("remove", _PACKAGES),
    "tdnf": ("remove erase", _PACKAGES),
    "zypper": ("remove rm", _PACKAGES),
    "apk": ("del", _PACKAGES),
    "pip": ("uninstall", _PACKAGES),
    "pip3": ("uninstall", _PACKAGES),
    "pipx": ("uninstall uninstall-all", _PACKAGES),
    "brew": ("uninstall remove rm", _PACKAGES),
    "choco": ("uninstall", _PACKAGES),
    "winget": ("uninstall remove rm", _PACKAGES),
    "scoop": ("uninstall", _PACKAGES),
    "snap": ("remove", _PACKAGES),
    "flatpak": ("uninstall remove", _PACKAGES),
    "gem": ("uninstall", _PACKAGES),
    "cargo": ("uninstall", _PACKAGES),
    "conda": ("remove uninstall", _PACKAGES),
    "mamba": ("remove uninstall", _PACKAGES),
    "port": ("uninstall", _PACKAGES),
}
_ALWAYS: dict[str, str] = {  # program: what it does, whatever its arguments
    **dict.fromkeys(
        names("mkfs mke2fs mkswap newfs format format-volume clear-disk"), "formats a disk"
    ),
    **dict.fromkeys(names("initialize-disk remove-partition diskpart"), "partitions a disk"),
    "blkdiscard": "discards a disk",
    **dict.fromkeys(names("shred srm"), "overwrites files"),
    "truncate": "truncates files",
    **dict.fromkeys(names("stop-service remove-service set-service suspend-service"), _SERVICE),
    **dict.fromkeys(
        names("unregister-scheduledtask disable-scheduledtask"), "scheduled task change"
    ),
    "bcdedit": "changes the boot configuration",
    **dict.fromkeys(names("uninstall-package uninstall-module remove-appxpackage"), _PACKAGES),
    **dict.fromkeys(
        names("shutdown reboot halt poweroff stop-computer restart-computer"),
        "shuts the machine down",
    ),
    "killall5": "kills every process",
    **dict.fromkeys(names("iptables-restore ip6tables-restore nft-restore"), "firewall change"),
    **dict.fromkeys(
        names(
            "userdel useradd usermod groupdel groupadd groupmod deluser adduser delgroup addgroup"
            " chpasswd chsh chfn gpasswd newusers vipw visudo"
        ),
        "account change",
    ),
    **dict.fromkeys(names("rimraf del-cli"), "recursive removal"),
}
RULES: dict[str, Rule] = {
    **FILE_RULES,
    **{name: _sub_in(f"{name} {verbs}", why) for name, (verbs, why) in _VERBS.items()},
    **{name: _always(f"{why} ({name})") for name, why in _ALWAYS.items()},
    "systemctl": _sub_in(
        "systemctl stop disable mask kill isolate poweroff reboot halt kexec rescue emergency"
        " set-default revert",
        _SERVICE,
        _SYSTEMCTL_VALUED,
    ),
    **dict.fromkeys(
        names("set-itemproperty new-itemproperty remove-itemproperty set-item new-item"),
        _ps_registry,
    ),
    **dict.fromkeys(("python", "python3", "py"), _python),
    **dict.fromkeys(("npm", "pnpm", "yarn"), _global_npm),
    **dict.fromkeys(("docker", "podman", "nerdctl", "docker-compose"), _docker),
    **dict.fromkeys(("kubectl", "oc"), _kubectl),
    **dict.fromkeys(("terraform", "tofu", "terragrunt", "pulumi"), _terraform),
    **dict.fromkeys(("aws", "az", "gcloud", "gsutil", "doctl"), _cloud),
    **dict.fromkeys(("init", "telinit"), _init),
    "cipher": _cipher,
    "regedit": _reg_edit, "service": _service, "update-rc.d": _update_rc, "chkconfig": _chkconfig,
    "net": _net, "schtasks": _schtasks, "crontab": _crontab, "wmic": _wmic, "dpkg": _dpkg,
    "rpm": _rpm, "pacman": _pacman, "uv": _uv, "msiexec": _msiexec, "kill": _kill,
    "rsync": _rsync, "sed": _sed, "gsed": _sed, "mv": _mv, "move-item": _mv, "unlink": _unlink,
    "gh": _gh, "tar": _tar, "bsdtar": _tar, "gtar": _tar, "unzip": _unzip,
    **{name: _copy(name) for name in ("cp", "install", "ln", "copy", "copy-item")},
    "iptables": _iptables, "ip6tables": _iptables, "passwd": _passwd,
}  # fmt: skip


def rule_for(name: str) -> Rule | None:
    """The rule for a program name (lower-cased, no directory, no ``.exe``)."""
    if name.startswith("mkfs."):
        return RULES["mkfs"]
    for family in ("python", "pip"):  # python3.12, pip3.12
        if name.startswith(family) and not name[len(family) :].strip("0123456789."):
            return RULES[family]
    return RULES.get(name)
