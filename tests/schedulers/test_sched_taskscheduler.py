"""Task Scheduler: the task XML parsed back, its UTF-16 file, the schtasks command lines,
and the Windows quoting checked against the C runtime's parsing rules."""

from __future__ import annotations

import codecs
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sched_helpers import Recorder, windows_entry

from relay.errors import LocalUsageError
from relay.schedulers import Completed, Entry, SchedulerError, TaskScheduler
from relay.schedulers.taskscheduler import NAMESPACE, quote_windows_arg, windows_command_line

NS = {"t": NAMESPACE}
CLONE = r"C:\Users\Zoë\My Projects\relé 项目"


def parse_windows_command_line(line: str) -> list[str]:
    """The test's oracle: the Microsoft C runtime's argument parsing (2008 and later)."""
    args: list[str] = []
    i, n = 0, len(line)
    while True:
        while i < n and line[i] in " \t":
            i += 1
        if i >= n:
            return args
        word: list[str] = []
        quoted = False
        while i < n and (quoted or line[i] not in " \t"):
            if line[i] == "\\":
                j = i
                while j < n and line[j] == "\\":
                    j += 1
                if j < n and line[j] == '"':
                    word.append("\\" * ((j - i) // 2) + ('"' if (j - i) % 2 else ""))
                    i = j + 1 if (j - i) % 2 else j
                else:
                    word.append(line[i:j])
                    i = j
            elif line[i] == '"':
                if quoted and i + 1 < n and line[i + 1] == '"':
                    word.append('"')
                    i += 2
                else:
                    quoted = not quoted
                    i += 1
            else:
                word.append(line[i])
                i += 1
        args.append("".join(word))


@pytest.mark.parametrize(
    ("line", "args"),
    [  # the worked examples of Microsoft's "Parsing C command-line arguments"
        ('"a b c" d e', ["a b c", "d", "e"]),
        (r'"ab\"c" "\\" d', ['ab"c', "\\", "d"]),
        (r'a\\\b d"e f"g h', [r"a\\\b", "de fg", "h"]),
        (r"a\\\"b c d", [r"a\"b", "c", "d"]),
        (r'a\\\\"b c" d e', [r"a\\b c", "d", "e"]),
        ('a"b"" c d', ['ab" c d']),
    ],
)
def test_oracle_agrees_with_microsofts_examples(line: str, args: list[str]) -> None:
    assert parse_windows_command_line(line) == args


@given(st.lists(st.text(st.characters(exclude_characters="\0", exclude_categories=["Cs"]))))
def test_quoting_round_trips_through_the_c_runtime_rules(args: list[str]) -> None:
    assert parse_windows_command_line(windows_command_line(tuple(args))) == args


def test_plain_words_stay_unquoted() -> None:
    words = [quote_windows_arg(w) for w in ("--once", "relay.cli", "")]
    assert words == ["--once", "relay.cli", '""']
    assert quote_windows_arg("C:\\My Dir\\") == '"C:\\My Dir\\\\"'


def test_task_xml_has_every_setting(tmp_path: Path) -> None:
    entry = windows_entry(clone=CLONE)
    ((name, text),) = TaskScheduler(home=tmp_path, user="DESKTOP-7\\zoë").render(entry).items()
    assert name == f"{entry.label}.xml"
    assert text.startswith('<?xml version="1.0" encoding="UTF-16"?>')
    task = ET.fromstring(text)
    assert task.tag == f"{{{NAMESPACE}}}Task"
    trigger = task.find("t:Triggers/t:TimeTrigger", NS)
    assert trigger is not None
    assert trigger.findtext("t:Repetition/t:Interval", namespaces=NS) == "PT5M"
    assert trigger.findtext("t:StartBoundary", namespaces=NS)
    settings_element = task.find("t:Settings", NS)
    assert settings_element is not None
    settings = {child.tag.split("}")[1]: child.text for child in settings_element}
    assert settings["MultipleInstancesPolicy"] == "IgnoreNew"
    assert settings["DisallowStartIfOnBatteries"] == "false"
    assert settings["StopIfGoingOnBatteries"] == "false"
    assert settings["StartWhenAvailable"] == "true"
    principal = task.find("t:Principals/t:Principal", NS)
    assert principal is not None
    # "run whether the user is logged on or not", and no password anywhere
    assert principal.findtext("t:LogonType", namespaces=NS) == "S4U"
    assert principal.findtext("t:UserId", namespaces=NS) == "DESKTOP-7\\zoë"
    assert "Password" not in text and "InteractiveToken" not in text
    assert principal.findtext("t:RunLevel", namespaces=NS) == "LeastPrivilege"
    command = task.findtext("t:Actions/t:Exec/t:Command", namespaces=NS)
    arguments = task.findtext("t:Actions/t:Exec/t:Arguments", namespaces=NS) or ""
    assert command == '"C:\\Program Files\\Python 3.12\\python.exe"'
    assert parse_windows_command_line(arguments) == list(entry.argv[1:])
    assert task.findtext("t:Actions/t:Exec/t:WorkingDirectory", namespaces=NS) == CLONE


@pytest.mark.parametrize(("seconds", "interval"), [(60, "PT1M"), (420, "PT7M"), (3600, "PT60M")])
def test_interval_becomes_an_iso_duration(seconds: int, interval: str, tmp_path: Path) -> None:
    entry = windows_entry(clone=CLONE, interval=seconds)
    (text,) = TaskScheduler(home=tmp_path).render(entry).values()
    assert ET.fromstring(text).findtext(".//t:Repetition/t:Interval", namespaces=NS) == interval


def test_register_uses_xml_in_utf16_with_bom_never_tr(tmp_path: Path) -> None:
    seen: dict[str, bytes] = {}

    def peek(argv: tuple[str, ...]) -> None:
        if "/XML" in argv and "/Create" in argv:
            seen["xml"] = Path(argv[argv.index("/XML") + 1]).read_bytes()

    recorder = Recorder(peek=peek)
    backend = TaskScheduler(runner=recorder, home=tmp_path)
    entry = windows_entry(clone=CLONE)
    backend.register(entry)
    query, argv = recorder.calls  # asked first: a task already in place is left alone
    assert query == ("schtasks", "/Query", "/TN", entry.label, "/XML")
    assert argv[:4] == ("schtasks", "/Create", "/TN", entry.label)
    assert argv[4] == "/XML" and argv[6:] == ("/F",)
    assert "/TR" not in argv
    assert not Path(argv[5]).exists()  # the temporary XML is gone afterwards
    assert seen["xml"].startswith(codecs.BOM_UTF16_LE)
    assert seen["xml"].decode("utf-16") == backend.render(entry)[f"{entry.label}.xml"]
    if sys.platform != "win32":  # a Windows log path is no path here: nothing was created
        assert list(tmp_path.iterdir()) == []


def test_verify_compares_the_registered_task_with_ours(tmp_path: Path) -> None:
    entry = windows_entry(clone=CLONE)
    (text,) = TaskScheduler(home=tmp_path).render(entry).values()
    stale = text.replace("PT5M", "PT10M")
    interactive = text.replace(">S4U<", ">InteractiveToken<")  # an older relay's task
    mangled = text.replace("Zoë", "Zo\u251c\u00bd")  # UTF-8 read back in a DOS code page
    cases = [
        (Completed(0, text, ""), True),
        (Completed(0, mangled, ""), True),
        (Completed(0, stale, ""), False),
        (Completed(0, interactive, ""), True),  # ours too; advice warns about it
        (Completed(0, "ERROR: <", ""), False),
        (Completed(1, "", "ERROR: The system cannot find the file specified."), False),
    ]
    for answer, ok in cases:
        recorder = Recorder(answers={("schtasks", "/Query"): [answer]})
        result = TaskScheduler(runner=recorder, home=tmp_path).verify(entry)
        assert result.ok is ok and result.scheduler == "Task Scheduler"
        assert recorder.calls == [("schtasks", "/Query", "/TN", entry.label, "/XML")]


def test_teardown_deletes_and_tolerates_an_absent_task(tmp_path: Path) -> None:
    entry = windows_entry(clone=CLONE)
    gone = Completed(1, "", "ERROR: The system cannot find the file specified.")
    recorder = Recorder(answers={("schtasks", "/Delete"): [gone], ("schtasks", "/Query"): [gone]})
    TaskScheduler(runner=recorder, home=tmp_path).teardown(entry)
    assert recorder.calls[0] == ("schtasks", "/Delete", "/TN", entry.label, "/F")
    (text,) = TaskScheduler(home=tmp_path).render(entry).values()
    denied = Completed(1, "", "ERROR: Access is denied.")
    kept = Recorder(
        answers={
            ("schtasks", "/Delete"): [denied],
            ("schtasks", "/Query"): [Completed(0, text, "")],
        }
    )
    with pytest.raises(SchedulerError, match="Access is denied"):
        TaskScheduler(runner=kept, home=tmp_path).teardown(entry)


def test_paths_task_scheduler_would_expand_are_refused(tmp_path: Path) -> None:
    with pytest.raises(LocalUsageError, match="%USERNAME%"):
        TaskScheduler(home=tmp_path).render(windows_entry(clone=r"C:\src\%USERNAME%\relay"))
    with pytest.raises(LocalUsageError, match="absolute"):
        TaskScheduler(home=tmp_path).render(windows_entry(clone=r"src\relay"))


@pytest.mark.skipif(sys.platform != "win32", reason="the real command-line parser is Windows'")
def test_quoting_survives_the_real_windows_parser(tmp_path: Path) -> None:
    script = tmp_path / "argv.py"
    script.write_text("import json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    args = ["plain", "two words", 'quote"inside', "trail\\", 'C:\\a b\\"c', "", "relé 项目"]
    line = windows_command_line((sys.executable, str(script), *args))
    out = subprocess.run(line, capture_output=True, check=True).stdout
    assert json.loads(out.decode("utf-8")) == args


@pytest.mark.skipif(sys.platform != "win32", reason="the real schtasks exists only on Windows")
def test_real_schtasks_round_trip(tmp_path: Path) -> None:
    clone = tmp_path / "My Clone relé"
    clone.mkdir()
    entry = Entry(
        label=f"relay-watch-ci-{tmp_path.name[-8:].lower()}",
        argv=(sys.executable, "-c", "pass"),
        working_dir=str(clone),
        stdout_log=str(tmp_path / "state" / "watch.log"),
        stderr_log=str(tmp_path / "state" / "watch.err.log"),
        interval_seconds=3600,
    )
    backend = TaskScheduler(home=tmp_path)
    try:
        backend.register(entry)
        assert backend.verify(entry).ok
        backend.register(entry)  # /F overwrites: joining twice changes nothing
        assert backend.verify(entry).ok
    finally:
        backend.teardown(entry)
    assert not backend.verify(entry).ok


def test_the_account_comes_from_the_environment_and_the_advice_names_the_token_file(
    tmp_path: Path,
) -> None:
    from relay.schedulers.taskscheduler import windows_user

    assert windows_user({"USERNAME": "zoë", "USERDOMAIN": "DESKTOP-7"}) == "DESKTOP-7\\zoë"
    assert windows_user({"USERNAME": "zoë"}) == "zoë"
    assert windows_user({}) == ""
    bare = TaskScheduler(home=tmp_path, user="")  # unknown: Task Scheduler takes the caller
    (text,) = bare.render(windows_entry(clone=CLONE)).values()
    assert ET.fromstring(text).find(".//t:UserId", NS) is None
    assert "S4U" in text
    (said,) = bare.advice(windows_entry(clone=CLONE))
    assert "logged on or not" in said and "--save-token" in said


def test_a_refused_s4u_task_falls_back_to_interactive_and_says_passes_wait(tmp_path: Path) -> None:
    created: list[str] = []

    def peek(argv: tuple[str, ...]) -> None:
        if "/Create" in argv:
            xml = Path(argv[argv.index("/XML") + 1]).read_bytes().decode("utf-16")
            created.append(ET.fromstring(xml).findtext(".//t:LogonType", namespaces=NS) or "")

    entry = windows_entry(clone=CLONE)
    (text,) = TaskScheduler(home=tmp_path).render(entry).values()
    interactive = text.replace(">S4U<", ">InteractiveToken<")
    denied = Completed(1, "", "ERROR: Access is denied.\r\n")
    missing = Completed(1, "", "ERROR: The system cannot find the file specified.")
    recorder = Recorder(
        answers={
            ("schtasks", "/Query"): [missing, Completed(0, interactive, "")],
            ("schtasks", "/Create"): [denied, Completed(0, "SUCCESS", "")],
        },
        peek=peek,
    )
    backend = TaskScheduler(runner=recorder, home=tmp_path, user="zoë")
    backend.register(entry)
    assert created == ["S4U", "InteractiveToken"]  # asked for S4U first, then the fallback
    assert backend.verify(entry).ok and backend.found_logon == "InteractiveToken"
    (said,) = backend.advice(entry)
    assert said.startswith("warning:") and "until you log on" in said
    assert "Access is denied" in said and "Log on as a batch job" in said


def test_an_s4u_task_in_place_is_left_alone_and_an_older_interactive_one_upgraded(
    tmp_path: Path,
) -> None:
    entry = windows_entry(clone=CLONE)
    (text,) = TaskScheduler(home=tmp_path).render(entry).values()
    same = Recorder(answers={("schtasks", "/Query"): [Completed(0, text, "")]})
    TaskScheduler(runner=same, home=tmp_path).register(entry)
    assert [c[1] for c in same.calls] == ["/Query"]  # nothing replaced mid-pass
    older = text.replace(">S4U<", ">InteractiveToken<")
    upgrade = Recorder(answers={("schtasks", "/Query"): [Completed(0, older, "")]})
    TaskScheduler(runner=upgrade, home=tmp_path).register(entry)
    assert [c[1] for c in upgrade.calls] == ["/Query", "/Create"]
    refused = Recorder(
        answers={
            ("schtasks", "/Query"): [Completed(0, older, "")],
            ("schtasks", "/Create"): [Completed(1, "", "ERROR: Access is denied.")],
        }
    )
    kept = TaskScheduler(runner=refused, home=tmp_path)
    kept.register(entry)  # the interactive task stays; it is not replaced by another
    assert [c[1] for c in refused.calls] == ["/Query", "/Create"]
    assert kept.advice(entry)[0].startswith("warning:")
