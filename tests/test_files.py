"""`write_atomically`: whole files or none, ordinary permissions, clear errors, no leftovers."""

import os
import stat

import pytest

from rouba_env.files import FileWriteError, remove_stale_temporaries, write_atomically


def test_writes_bytes_text_and_through_a_writer_function(tmp_path):
    target = tmp_path / "deep" / "file.bin"
    write_atomically(target, b"one")
    assert target.read_bytes() == b"one"
    write_atomically(target, "twö")
    assert target.read_text(encoding="utf-8") == "twö"
    write_atomically(target, lambda path: path.write_bytes(b"three"))
    assert target.read_bytes() == b"three"
    assert [p.name for p in target.parent.iterdir()] == ["file.bin"], "no temporary file is left behind"


def test_files_are_readable_by_others_under_the_usual_umask(tmp_path):
    previous = os.umask(0o022)
    try:
        path = write_atomically(tmp_path / "result.json", b"{}")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "data.txt"
    write_atomically(target, b"old")

    def half_then_fail(path):
        path.write_bytes(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(FileWriteError, match=r"cannot write .*data.txt: the disk is full"):
        write_atomically(target, half_then_fail)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["data.txt"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into read-only folders")
def test_a_read_only_folder_is_a_clear_error(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(FileWriteError, match="permission denied"):
            write_atomically(folder / "x", b"1")
    finally:
        folder.chmod(0o755)


def test_stale_temporaries_are_removed(tmp_path):
    (tmp_path / ".checkpoint.pt.abc123.tmp").write_bytes(b"partial")
    (tmp_path / "keep.tmp.txt").write_bytes(b"mine")
    removed = remove_stale_temporaries(tmp_path)
    assert [p.name for p in removed] == [".checkpoint.pt.abc123.tmp"]
    assert [p.name for p in tmp_path.iterdir()] == ["keep.tmp.txt"]


def test_a_symlink_is_followed_and_stays_a_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_bytes(b"old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_atomically(link, b"new")
    assert link.is_symlink(), "the link itself is not replaced by a file"
    assert real.read_bytes() == b"new"


def test_a_fifo_is_written_through_not_replaced(tmp_path):
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_atomically(fifo, lambda path: path.write_bytes(b"through a writer"))
    reader.join(timeout=10)
    assert received == [b"through a writer"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO is still a FIFO"
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


def _made_device(folder, name, minor):
    """A character device made in ``folder`` (root only): the tests never risk the machine's own /dev."""
    path = folder / name
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    return path


NULL_MINOR, FULL_MINOR = 3, 7
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="making device nodes needs root")


@needs_root
def test_devices_are_written_through_and_a_full_device_is_a_clear_error(tmp_path):
    null = _made_device(tmp_path, "null", NULL_MINOR)
    write_atomically(null, b"discarded")
    assert stat.S_ISCHR(os.stat(null).st_mode), "the null device stays a device"
    full = _made_device(tmp_path, "full", FULL_MINOR)
    with pytest.raises(FileWriteError, match=r"cannot write .*full: the disk is full"):
        write_atomically(full, b"x" * 10)
    assert stat.S_ISCHR(os.stat(full).st_mode)


@needs_root
def test_a_command_writes_its_json_through_a_device(tmp_path):
    from rouba_env.cli.evaluate import main

    null = _made_device(tmp_path, "null", NULL_MINOR)
    assert main(["--players", "random", "greedy", "--games", "4", "--json", str(null)]) in (0, None)
    assert stat.S_ISCHR(os.stat(null).st_mode), "the device is still a character device"


def test_standard_output_is_written_to_not_replaced_when_it_is_a_file(tmp_path):
    """``--json /dev/stdout >> log`` appends to the log; it never replaces the log with the JSON alone."""
    import subprocess
    import sys

    log = tmp_path / "log.txt"
    log.write_text("kept\n")
    code = ("print('before', flush=True)\nfrom rouba_env.files import write_atomically\n"
            "write_atomically('/dev/stdout', '{}\\n')\nprint('after')")
    with log.open("a") as stream:
        subprocess.run([sys.executable, "-c", code], stdout=stream, check=True, timeout=120)
    assert log.read_text() == "kept\nbefore\n{}\nafter\n"


def test_a_symlink_loop_is_a_clear_error(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(FileWriteError, match="symlinks form a loop"):
        write_atomically(tmp_path / "a", b"x")
    assert (tmp_path / "a").is_symlink()


def test_a_linked_files_permissions_are_kept(tmp_path):
    real = tmp_path / "secret.json"
    real.write_bytes(b"old")
    os.chmod(real, 0o600)
    (tmp_path / "link").symlink_to(real)
    write_atomically(tmp_path / "link", b"new")
    assert stat.S_IMODE(real.stat().st_mode) == 0o600 and real.read_bytes() == b"new"


def test_a_symlink_to_a_missing_folder_is_refused_before_work(tmp_path):
    from rouba_env.files import check_writable

    (tmp_path / "out").symlink_to(tmp_path / "missing")
    with pytest.raises(FileWriteError, match="symlink to a missing folder"):
        check_writable(tmp_path / "out", folder=True)


@needs_root
def test_the_benchmark_onto_a_full_device_says_so_in_one_line(tmp_path, capsys):
    """The run's table is printed, then one error line (not a traceback) for the JSON that could not be written."""
    from rouba_env.cli.benchmark import main

    full = _made_device(tmp_path, "full", FULL_MINOR)
    assert main(["--only", "aec_raw", "--quick", "--no-pin", "--json", str(full)]) == 2
    out, err = capsys.readouterr()
    assert "raw_env()" in out and err.strip().splitlines()[-1].startswith("error: cannot write")
